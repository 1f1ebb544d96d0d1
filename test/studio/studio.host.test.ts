import { describe, expect, it } from 'vitest';
import { namesStudio } from '../../src/studio/studioHost.js';

describe('which Host headers name the studio', () => {
  it('on port 80 a browser sends its own URL without the port, and that names the studio', () => {
    const bound = { host: '127.0.0.1', port: 80 };
    for (const host of ['127.0.0.1', '127.0.0.1:80', 'localhost', 'LOCALHOST', '[::1]', '[::1]:80'])
      expect(namesStudio(host, bound), host).toBe(true);
  });

  it('on port 80 other names, other ports and smuggled parts are still refused', () => {
    const bound = { host: '127.0.0.1', port: 80 };
    for (const host of [
      'evil.example',
      'evil.example:80',
      '127.0.0.1:8080',
      '127.0.0.1:443',
      'user@127.0.0.1',
      '127.0.0.1/x',
      '',
    ])
      expect(namesStudio(host, bound), host).toBe(false);
  });

  it('on any other port the port must be given, and be that port', () => {
    const bound = { host: '127.0.0.1', port: 4319 };
    expect(namesStudio('127.0.0.1:4319', bound)).toBe(true);
    expect(namesStudio('127.0.0.1', bound)).toBe(false);
    expect(namesStudio('127.0.0.1:80', bound)).toBe(false);
    expect(namesStudio('127.0.0.1:4320', bound)).toBe(false);
  });

  it('bound to all addresses on port 80, any address without the port names it; a name other than loopback does not', () => {
    const bound = { host: '0.0.0.0', port: 80 };
    expect(namesStudio('192.168.1.20', bound)).toBe(true);
    expect(namesStudio('[fe80::1]', bound)).toBe(true);
    expect(namesStudio('studio.example', bound)).toBe(false);
  });

  it('bound to a named address on port 80, that name without the port names it', () => {
    const bound = { host: 'studio.lan', port: 80 };
    expect(namesStudio('studio.lan', bound)).toBe(true);
    expect(namesStudio('Studio.LAN:80', bound)).toBe(true);
    expect(namesStudio('other.lan', bound)).toBe(false);
  });
});
