# Starts the External Signals MT5 bridge {{VERSION}} with es-mt5-bridge.ini from this folder. The first run (and the
# first run after a newer package was unpacked here) installs the bridge into .venv in this folder.
# Run it with: powershell -ExecutionPolicy Bypass -File .\start-bridge.ps1
$ErrorActionPreference = 'Stop'
Set-Location -LiteralPath $PSScriptRoot
$wheel = '{{WHEEL}}'
$python = Join-Path $PSScriptRoot '.venv\Scripts\python.exe'
$marker = Join-Path $PSScriptRoot ".venv\installed-$wheel.txt"
if (-not (Test-Path -LiteralPath $marker)) {
    Write-Host "Installing the bridge {{VERSION}} into $PSScriptRoot\.venv ..."
    if (-not (Test-Path -LiteralPath $python)) {
        if (Get-Command py -ErrorAction SilentlyContinue) { & py -3 -m venv .venv } else { & python -m venv .venv }
    }
    if (-not (Test-Path -LiteralPath $python)) {
        throw 'Python 3.9 or later is needed: install it from python.org (tick "Add python.exe to PATH"), then run this again.'
    }
    & $python -m pip install --disable-pip-version-check --upgrade $wheel
    if ($LASTEXITCODE -ne 0) { throw 'Installing the bridge failed: see the lines above (it needs the internet once, for the MetaTrader5 package).' }
    Set-Content -LiteralPath $marker -Value $wheel
}
& $python -m es_mt5_bridge --config es-mt5-bridge.ini @args
exit $LASTEXITCODE
