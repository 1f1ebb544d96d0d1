/**
 * Text from outside (what a person typed, a model's reply, an error quoting either) made safe to
 * print on a terminal: escape sequences (CSI, OSC, DCS and the rest, 7- and 8-bit) are removed,
 * and any other control character is shown as its visible symbol (ESC as ␛, a carriage return as
 * ␍), so nothing from outside can move the cursor, recolour the screen, retitle the window or
 * overwrite a line. Newlines and tabs stay; text-direction overrides are removed.
 */

// ESC or 8-bit CSI/OSC/DCS… followed by a sequence: CSI … final byte; OSC/DCS/SOS/PM/APC … up to
// BEL or ST; or a two-character escape.
const escapeSequence =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const otherControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu;
const directionOverride = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** The visible stand-in for a control character: its Unicode control picture, or � for C1. */
function picture(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return '\ufffd';
}

/** `text` safe to print on a terminal (see the module note). */
export function terminalText(text: string): string {
  return text.replace(escapeSequence, '').replace(otherControl, picture).replace(directionOverride, '');
}
