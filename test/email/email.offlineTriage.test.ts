/**
 * The offline router: how it reads the preferences (sections, list lines, words, senders) and
 * which line wins, with the reasoning a person sees. It decides every email when no model is
 * configured, so each of these is a decision a user would notice.
 */
import { describe, expect, it } from 'vitest';
import { type Email, parseEmail } from '../../src/email/emailInput.js';
import { offlineTriage, preferenceLines } from '../../src/email/offlineTriage.js';
import {
  isSender,
  namedSenders,
  senderAddress,
  senderName,
  withoutSenders,
} from '../../src/email/senderScope.js';

function email(from: string, subject: string, body = 'Hello.'): Email {
  const parsed = parseEmail({ id: 'o1', from, to: 'sam@acme.dev', subject, body });
  if (!parsed.ok) throw parsed.error;
  return parsed.email;
}

describe('reading the preferences', () => {
  it('a heading in any case opens a section; `- `, `* ` and `• ` lines under it are kinds of email; other lines are not', () => {
    const lines = preferenceLines(
      [
        '- lines before any heading belong to no section',
        'IGNORE: these',
        '- marketing newsletters',
        'plain prose under a heading is not a kind of email',
        'Notify:',
        '* deploy failures',
        '• security alerts',
        '-no space after the dash',
        'respond when asked',
        '- direct questions',
      ].join('\n'),
    );
    expect(lines.map((l) => [l.classification, l.text])).toEqual([
      ['ignore', 'marketing newsletters'],
      ['notify', 'deploy failures'],
      ['notify', 'security alerts'],
      ['respond', 'direct questions'],
    ]);
  });

  it('reads indented lines, and a kind of email that names a section word stays a kind of email', () => {
    const lines = preferenceLines(
      '  Ignore:\n   -   lottery wins I never respond to\nbuild - failures\n  Notify:\n  - deploys',
    );
    expect(lines.map((l) => [l.classification, l.text])).toEqual([
      ['ignore', 'lottery wins I never respond to'],
      ['notify', 'deploys'],
    ]);
  });

  it('keeps words of four letters or more that say something, once per stem, as written', () => {
    const [line] = preferenceLines('Notify:\n- emails about taxi receipts, Receipts and the big bus');
    // "emails" and "about" are filler, "the", "big", "bus" too short, "Receipts" the same stem.
    expect(line?.words).toEqual([
      { stem: 'taxi', word: 'taxi' },
      { stem: 'recei', word: 'receipts' },
    ]);
    // A line with nothing to match is no line at all.
    expect(preferenceLines('Notify:\n- the big red bus\n- about emails like that')).toEqual([]);
  });

  it('a line naming a sender keeps it (address, domain or quoted name), and its words are what is left', () => {
    const [line] = preferenceLines('Ignore:\n- price drops from Deals@Shop.example. and from “Shop News”');
    expect(line?.senders).toEqual(['deals@shop.example', 'name:shopnews']);
    expect(line?.words.map((w) => w.word)).toEqual(['price', 'drops']);
    const [domainOnly] = preferenceLines('Ignore:\n- emails from @spam.example');
    expect(domainOnly).toMatchObject({ senders: ['@spam.example'], words: [] });
  });
});

describe('which line decides', () => {
  it('a word in the subject counts twice a word in the body', () => {
    const instructions = 'Notify:\n- deploy failures\n\nRespond:\n- invoice payment';
    // Notify scores 2 + 2 from the subject, Respond 1 + 1 from the body.
    expect(offlineTriage(email('ci@acme.dev', 'Deploy failures', 'invoice payment'), instructions)).toEqual({
      classification: 'notify',
      reasoning: 'Matches “deploy failures” under Notify (“deploy”, “failures”).',
      decidedBy: 'offline',
    });
    // The other way round, Respond wins.
    expect(
      offlineTriage(email('ci@acme.dev', 'Invoice payment', 'deploy failures'), instructions).classification,
    ).toBe('respond');
  });

  it('the best score wins wherever its line is; on a tie the line that asks more of a person wins', () => {
    const ignoreFirst = 'Ignore:\n- lunch menus\n\nNotify:\n- lunch plans\n\nRespond:\n- dinner invitations';
    const notifyFirst = 'Notify:\n- lunch plans\n\nIgnore:\n- lunch menus';
    for (const instructions of [ignoreFirst, notifyFirst]) {
      expect(offlineTriage(email('ana@acme.dev', 'Lunch'), instructions).classification).toBe('notify');
    }
    // Ignore scores more (two words) than Notify (one): the higher score wins over the rank.
    expect(offlineTriage(email('ana@acme.dev', 'Lunch menus'), notifyFirst)).toMatchObject({
      classification: 'ignore',
      reasoning: 'Matches “lunch menus” under Ignore (“lunch”, “menus”).',
    });
    // Within a section, the first of two lines with the same score decides (and is the one named).
    expect(
      offlineTriage(email('ana@acme.dev', 'Lunch'), 'Ignore:\n- lunch menus\n- lunch plans').reasoning,
    ).toBe('Matches “lunch menus” under Ignore (“lunch”).');
    // A later line with a higher score replaces an earlier one; a later one that scores less does not.
    const respondLast = 'Notify:\n- lunch plans\n\nRespond:\n- lunch invitations today';
    expect(offlineTriage(email('ana@acme.dev', 'Lunch invitations today'), respondLast).classification).toBe(
      'respond',
    );
    const notifyLast = 'Respond:\n- lunch invitations today\n\nNotify:\n- lunch plans';
    expect(offlineTriage(email('ana@acme.dev', 'Lunch invitations today'), notifyLast).classification).toBe(
      'respond',
    );
  });

  it('a word is found by its first five letters, a word of four letters counts, filler never does', () => {
    expect(offlineTriage(email('ana@acme.dev', 'Meetings'), 'Ignore:\n- meeting notes').classification).toBe(
      'ignore',
    );
    expect(offlineTriage(email('ana@acme.dev', 'Taxi'), 'Ignore:\n- taxi receipts')).toMatchObject({
      classification: 'ignore',
      reasoning: 'Matches “taxi receipts” under Ignore (“taxi”).',
    });
    expect(
      offlineTriage(email('ana@acme.dev', 'About your emails'), 'Ignore:\n- emails about weather'),
    ).toMatchObject({
      classification: 'notify',
      reasoning: 'No preference matches: notify, so a person decides.',
    });
  });

  it('only the first 20,000 characters of the body are read', () => {
    const late = `${'filler text. '.repeat(2_000)}invoice`;
    expect(late.indexOf('invoice')).toBeGreaterThan(20_000);
    expect(
      offlineTriage(email('ana@acme.dev', 'Hi', late), 'Ignore:\n- invoice reminders').classification,
    ).toBe('notify');
    const early = `invoice ${'filler text. '.repeat(2_000)}`;
    expect(
      offlineTriage(email('ana@acme.dev', 'Hi', early), 'Ignore:\n- invoice reminders').classification,
    ).toBe('ignore');
  });

  it('with nothing matched, a question in the subject or the body is respond, anything else notify', () => {
    const none = 'Ignore:\n- marketing newsletters';
    expect(offlineTriage(email('ana@acme.dev', 'Free on Friday?'), none)).toEqual({
      classification: 'respond',
      reasoning: 'No preference matches, and the email asks a question: respond.',
      decidedBy: 'offline',
    });
    expect(offlineTriage(email('ana@acme.dev', 'Friday', 'Are you free?'), none).classification).toBe(
      'respond',
    );
    expect(offlineTriage(email('ana@acme.dev', 'Friday', 'I am free.'), none)).toEqual({
      classification: 'notify',
      reasoning: 'No preference matches: notify, so a person decides.',
      decidedBy: 'offline',
    });
  });
});

describe('a line that names a sender', () => {
  it('applies to that sender and, for a domain, its subdomains; never to anyone else', () => {
    const instructions = 'Ignore:\n- emails from @alerts.example';
    expect(offlineTriage(email('Bot <bot@alerts.example>', 'Zzz'), instructions)).toEqual({
      classification: 'ignore',
      reasoning: 'Matches “emails from @alerts.example” under Ignore (“@alerts.example”).',
      decidedBy: 'offline',
    });
    expect(offlineTriage(email('ci@builds.alerts.example', 'Zzz'), instructions).classification).toBe(
      'ignore',
    );
    expect(offlineTriage(email('ci@notalerts.example', 'Zzz'), instructions).classification).toBe('notify');
    expect(offlineTriage(email('ci@alerts.example.org', 'Zzz'), instructions).classification).toBe('notify');
  });

  it('with a topic, the sender counts only when the topic matches too, and then adds to its score', () => {
    const instructions = 'Ignore:\n- price drops from deals@shop.example\n\nNotify:\n- price drops';
    // The sender and the topic: Ignore (2 + 2 + 2) beats Notify (2 + 2).
    expect(offlineTriage(email('deals@shop.example', 'Price drops'), instructions)).toMatchObject({
      classification: 'ignore',
      reasoning:
        'Matches “price drops from deals@shop.example” under Ignore (“price”, “drops”, “deals@shop.example”).',
    });
    // The sender without the topic: the Ignore line does not apply.
    expect(offlineTriage(email('deals@shop.example', 'Zzz'), instructions).classification).toBe('notify');
    // The topic from someone else: only Notify applies.
    expect(offlineTriage(email('ana@acme.dev', 'Price drops'), instructions).classification).toBe('notify');
  });

  it('a sender without an address is named by its name, whatever its spacing or case', () => {
    const instructions = 'Ignore:\n- emails from “CI Alerts”';
    expect(offlineTriage(email('ci alerts', 'Zzz'), instructions).classification).toBe('ignore');
    expect(offlineTriage(email('CI Bot', 'Zzz'), instructions).classification).toBe('notify');
  });
});

describe('naming senders', () => {
  it('the address of a From header, lower case; without one, the name squeezed', () => {
    expect(senderAddress('Ana Lima <Ana.Lima@ACME.dev>')).toBe('ana.lima@acme.dev');
    expect(senderAddress('reply to Ana.Lima@Acme.dev please')).toBe('ana.lima@acme.dev');
    expect(senderAddress('“CI  Alerts” <>')).toBe('name:cialerts');
    // In angle brackets, the address is taken whole, spaces dropped, whatever characters it holds.
    expect(senderAddress('Ana < Ana@Acme.dev >')).toBe('ana@acme.dev');
    expect(senderAddress('Odd <a!b@acme.dev!x>')).toBe('a!b@acme.dev!x');
  });

  it('a learned line names the sender by address, else by its name in quotes, else “unknown”', () => {
    expect(senderName('Ana <ana@acme.dev>')).toBe('ana@acme.dev');
    expect(senderName('"CI   Alerts" <no address>')).toBe('“CI Alerts no address”');
    expect(senderName('<>')).toBe('“unknown”');
    expect(senderName('CI<Alerts>')).toBe('“CI Alerts”');
    expect(senderName('x'.repeat(300))).toBe(`“${'x'.repeat(200)}”`);
  });

  it('a domain is matched by addresses at it or below it, an address only by itself, a name never by a domain', () => {
    expect(isSender('a@acme.dev', 'a@acme.dev')).toBe(true);
    expect(isSender('b@acme.dev', 'a@acme.dev')).toBe(false);
    expect(isSender('a@acme.dev', '@acme.dev')).toBe(true);
    expect(isSender('a@eu.acme.dev', '@acme.dev')).toBe(true);
    expect(isSender('a@notacme.dev', '@acme.dev')).toBe(false);
    expect(isSender('name:acme.dev', '@acme.dev')).toBe(false);
    expect(isSender('name:ci.acme.dev', '@acme.dev')).toBe(false);
    expect(isSender('name:cialerts', 'name:cialerts')).toBe(true);
  });

  it('the senders a line names, and the line without them', () => {
    expect(namedSenders('alerts from CI@Acme.dev. and @Builds.acme.dev, not a@b')).toEqual([
      'ci@acme.dev',
      '@builds.acme.dev',
    ]);
    expect(withoutSenders('price drops from deals@shop.example and from “Shop News”')).toBe(
      'price drops from   and  ',
    );
  });
});
