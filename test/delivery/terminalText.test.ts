import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { terminalText } from '../../src/delivery/terminalText.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const ESC = '\u001b';

describe('terminalText', () => {
  it('removes colour, cursor, clear-screen, title and hyperlink sequences', () => {
    expect(terminalText(`red ${ESC}[31mRED${ESC}[0m ok`)).toBe('red RED ok');
    expect(terminalText(`clear ${ESC}[2J${ESC}[H top`)).toBe('clear  top');
    expect(terminalText(`title ${ESC}]0;pwned\u0007 ok`)).toBe('title  ok');
    expect(terminalText(`${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\`)).toBe('link');
    expect(terminalText(`dcs ${ESC}Pqpayload${ESC}\\ end`)).toBe('dcs  end');
    expect(terminalText('8-bit \u009b2J csi')).toBe('8-bit  csi');
    expect(terminalText(`reset ${ESC}c`)).toBe('reset ');
  });

  it('shows other control characters as visible symbols, keeps newlines and tabs', () => {
    expect(terminalText('a\rb')).toBe('a␍b');
    expect(terminalText('bell\u0007')).toBe('bell␇');
    expect(terminalText('del\u007f')).toBe('del␡');
    expect(terminalText('one\ntwo\tthree')).toBe('one\ntwo\tthree');
    expect(terminalText('\u202eevil')).toBe('evil');
    expect(terminalText('Zoë 李白 👩‍🚀')).toBe('Zoë 李白 👩‍🚀');
  });

  it('never lets an escape, a carriage return or a C1 control through, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
        const out = terminalText(text);
        for (const ch of out) {
          const code = ch.codePointAt(0) ?? 0;
          expect(code === 0x1b || code === 0x0d || (code >= 0x80 && code <= 0x9f)).toBe(false);
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});
