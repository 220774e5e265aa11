@echo off
rem Starts the External Signals MT5 bridge {{VERSION}} with es-mt5-bridge.ini from this folder. The first run (and the
rem first run after a newer package was unpacked here) installs the bridge into .venv in this folder.
setlocal
cd /d "%~dp0"
set "WHEEL={{WHEEL}}"
if exist ".venv\installed-%WHEEL%.txt" goto run
echo Installing the bridge {{VERSION}} into "%~dp0.venv" ...
if not exist ".venv\Scripts\python.exe" py -3 -m venv .venv 2>nul
if not exist ".venv\Scripts\python.exe" python -m venv .venv
if not exist ".venv\Scripts\python.exe" goto nopython
".venv\Scripts\python.exe" -m pip install --disable-pip-version-check --upgrade "%WHEEL%"
if errorlevel 1 goto installfailed
echo %WHEEL%>".venv\installed-%WHEEL%.txt"
:run
".venv\Scripts\python.exe" -m es_mt5_bridge --config es-mt5-bridge.ini %*
if errorlevel 1 pause
exit /b %errorlevel%
:nopython
echo Python 3.9 or later is needed: install it from python.org (tick "Add python.exe to PATH"), then run this again.
pause
exit /b 1
:installfailed
echo Installing the bridge failed: see the lines above (it needs the internet once, for the MetaTrader5 package).
pause
exit /b 1
