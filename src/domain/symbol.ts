/** An instrument symbol as a signal, a risk rule or a filter may name it: 1 to 32 letters, digits or ._#-/. */
export const SYMBOL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._#\-/]{0,31}$/;
