/**
 * Addresses: what counts as an address a reply may go to, how a header is read (and where it
 * ends), how a list is written back, and the name a reply greets. A mistake here sends mail to the
 * wrong place, adds a header, or greets "Hi Rossi," instead of "Hi Marco,".
 */
import { describe, expect, it } from 'vitest';
import {
  formatAddressList,
  greetingName,
  isEmailAddress,
  MAX_RECIPIENTS,
  parseAddressHeader,
  parseRecipients,
  senderAddress,
} from '../../src/email/emailAddress.js';

describe('a plain mailbox address', () => {
  it('is local@domain with letters of any script; dots only between parts, labels not starting or ending with a hyphen', () => {
    for (const ok of [
      'ana@acme.dev',
      'a.b+tag@mail.acme.dev',
      'jürgen@müller.example',
      'root@localhost',
      "o'hara@x.example",
    ])
      expect(isEmailAddress(ok), ok).toBe(true);
    for (const bad of [
      'ana',
      '@acme.dev',
      'ana@',
      'a..b@acme.dev',
      '.a@acme.dev',
      'a.@acme.dev',
      'a@-acme.dev',
      'a@acme-.dev',
      'a@acme..dev',
      'a b@acme.dev',
      'a@b@acme.dev',
      'Ana <ana@acme.dev>',
    ])
      expect(isEmailAddress(bad), bad).toBe(false);
  });

  it('is at most 320 characters long', () => {
    const at320 = `${'a'.repeat(320 - '@acme.dev'.length)}@acme.dev`;
    expect(at320).toHaveLength(320);
    expect(isEmailAddress(at320)).toBe(true);
    expect(isEmailAddress(`a${at320}`)).toBe(false);
  });
});

describe('reading an address header', () => {
  it('unfolds a folded header, and a line break without a space after it ends the header', () => {
    expect(parseAddressHeader('Ana <ana@acme.dev>,\r\n  Ben <ben@acme.dev>')).toEqual([
      { name: 'Ana', address: 'ana@acme.dev' },
      { name: 'Ben', address: 'ben@acme.dev' },
    ]);
    expect(parseAddressHeader('ana@acme.dev\nBcc: all@evil.example')).toEqual([
      { name: '', address: 'ana@acme.dev' },
    ]);
  });

  it('a name folded onto the next line (after a bare line feed too) reads as one name', () => {
    expect(parseAddressHeader('"Ana\n  Lima" <ana@acme.dev>')).toEqual([
      { name: 'Ana Lima', address: 'ana@acme.dev' },
    ]);
    expect(parseAddressHeader('"Ana\r\n\tLima" <ana@acme.dev>')).toEqual([
      { name: 'Ana Lima', address: 'ana@acme.dev' },
    ]);
  });

  it('flattens groups and leaves out entries without an address', () => {
    expect(parseAddressHeader('Team: ana@acme.dev, ben@acme.dev;, Nobody, carl@acme.dev')).toEqual([
      { name: '', address: 'ana@acme.dev' },
      { name: '', address: 'ben@acme.dev' },
      { name: '', address: 'carl@acme.dev' },
    ]);
  });

  it('every control character in a name becomes a space, and the name is trimmed', () => {
    expect(parseAddressHeader('"Carl\u0085" <carl@acme.dev>')).toEqual([
      { name: 'Carl', address: 'carl@acme.dev' },
    ]);
    expect(parseAddressHeader('"\tCa\trl\u2028Berg\t" <carl@acme.dev>')).toEqual([
      { name: 'Ca rl Berg', address: 'carl@acme.dev' },
    ]);
  });

  it('the sender is the first mailbox; a header that names none is given back trimmed', () => {
    expect(senderAddress('Ana <ana@acme.dev>, Ben <ben@acme.dev>')).toBe('ana@acme.dev');
    expect(senderAddress('  (unknown sender)  ')).toBe('(unknown sender)');
  });
});

describe('the recipients of a reply', () => {
  it('one bare address, surrounded by spaces, is that address', () => {
    expect(parseRecipients('  ana@acme.dev ')).toEqual({
      ok: true,
      recipients: [{ name: '', address: 'ana@acme.dev' }],
    });
  });

  it('say why they cannot be used: a line break, a group, entries that are not addresses, none, too many', () => {
    expect(parseRecipients('ana@acme.dev\r\nBcc: x@evil.example')).toEqual({
      ok: false,
      problem: 'it holds a line break or a control character',
    });
    expect(parseRecipients('Team: ana@acme.dev, ben@acme.dev;')).toEqual({
      ok: false,
      problem: 'it holds an address group (“name: …;”)',
    });
    expect(parseRecipients('Marco Rossi, ana@acme.dev, not@, @nope, also bad')).toEqual({
      ok: false,
      problem: '"Marco Rossi", "not@", "@nope" is not an email address',
    });
    expect(parseRecipients('')).toEqual({ ok: false, problem: 'it names no email address' });
    const many = Array.from({ length: MAX_RECIPIENTS + 1 }, (_, i) => `p${i}@acme.dev`).join(', ');
    expect(parseRecipients(many)).toEqual({ ok: false, problem: 'it names 51 recipients; at most 50' });
    const enough = Array.from({ length: MAX_RECIPIENTS }, (_, i) => `p${i}@acme.dev`).join(', ');
    expect(parseRecipients(enough)).toMatchObject({ ok: true });
  });
});

describe('writing an address list', () => {
  it('a name of letters, digits and spaces as it is; any other name quoted; no name, the address alone', () => {
    expect(
      formatAddressList([
        { name: 'Ana Lima 2', address: 'ana@acme.dev' },
        { name: 'J. Smith', address: 'js@acme.dev' },
        { name: '', address: 'ben@acme.dev' },
      ]),
    ).toBe('Ana Lima 2 <ana@acme.dev>, "J. Smith" <js@acme.dev>, ben@acme.dev');
    expect(formatAddressList([{ name: 'Back\\slash "Q"', address: 'b@x.example' }])).toBe(
      '"Back\\\\slash \\"Q\\"" <b@x.example>',
    );
  });
});

describe('the name a reply greets', () => {
  it('the first name of the display name, else of the address; a title with its dot is not the name', () => {
    const greetings: [string, string][] = [
      ['"Rossi, Marco" <marco@acme.dev>', 'Marco'],
      ['Marco Rossi <marco@acme.dev>', 'Marco'],
      ['Jürgen Müller <juergen@acme.dev>', 'Jürgen'],
      ['"Dr. Jane O\'Hara" <jane@x.example>', 'Jane'],
      ['"O\'Hara" <o@x.example>', "O'Hara"],
      ['"((Ana))" <a@x.example>', 'Ana'],
      ['"Ana!!" <a@x.example>', 'Ana'],
      ['"— Ana" <a@x.example>', 'Ana'],
      ['dana.kim@acme.dev', 'Dana'],
      ['"marco@acme.dev" <marco@acme.dev>', 'Marco'],
      ['(unknown sender)', 'there'],
    ];
    for (const [from, name] of greetings) expect(greetingName(from), from).toBe(name);
  });

  it('capitalised; from the address when the name is empty; "there" when it is too long to be a name', () => {
    expect(greetingName('ana lima <ana@acme.dev>')).toBe('Ana');
    expect(greetingName('<j_smith+news@acme.dev>')).toBe('J');
    expect(greetingName(`${'x'.repeat(41)} <x@acme.dev>`)).toBe('there');
    expect(greetingName(`${'x'.repeat(40)} <x@acme.dev>`)).toBe(`X${'x'.repeat(39)}`);
  });

  it('"Last, First" greets the first name; a name with more commas, or an empty part, greets its first word', () => {
    expect(greetingName('"Rossi, Marco, Jr" <m@acme.dev>')).toBe('Rossi');
    expect(greetingName('"Rossi," <m@acme.dev>')).toBe('Rossi');
    // Only a title: it is the only word there is.
    expect(greetingName('"Dr." <d@acme.dev>')).toBe('Dr');
    expect(greetingName('"(Ana)" <a@acme.dev>')).toBe('Ana');
  });
});
