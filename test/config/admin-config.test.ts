import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';

describe('ADMIN_PORT and ADMIN_HOST', () => {
  it('leaves the admin listener off unless ADMIN_PORT is set', () => {
    expect(loadConfig({}).admin).toBeUndefined();
  });

  it('listens on 127.0.0.1 by default, ADMIN_HOST otherwise', () => {
    expect(loadConfig({ ADMIN_PORT: '9090' }).admin).toEqual({ port: 9090, host: '127.0.0.1' });
    expect(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: '0.0.0.0' }).admin?.host).toBe('0.0.0.0');
  });

  it('refuses a bad port, and the pet API port, naming the variable', () => {
    expect(() => loadConfig({ ADMIN_PORT: 'abc' })).toThrow(
      'ADMIN_PORT must be an integer 1-65535 (got "abc")',
    );
    expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080' })).toThrow(
      /ADMIN_PORT must be a port other than PORT/,
    );
  });
});
