import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';

describe('OPS_PORT, OPS_HOST and DOCS', () => {
  it('leaves the operations listener off unless OPS_PORT is set', () => {
    expect(loadConfig({}).ops).toBeUndefined();
  });

  it('listens on 127.0.0.1 by default, OPS_HOST otherwise', () => {
    expect(loadConfig({ OPS_PORT: '9100' }).ops).toEqual({ port: 9100, host: '127.0.0.1' });
    expect(loadConfig({ OPS_PORT: '9100', OPS_HOST: '0.0.0.0' }).ops?.host).toBe('0.0.0.0');
  });

  it('refuses a bad port, the pet API port and the admin port, naming the variable', () => {
    expect(() => loadConfig({ OPS_PORT: '0' })).toThrow(
      'OPS_PORT must be an integer 1-65535 (got "0")',
    );
    expect(() => loadConfig({ PORT: '8080', OPS_PORT: '8080' })).toThrow(
      'OPS_PORT must be a port other than PORT (8080) (got "8080")',
    );
    expect(() => loadConfig({ ADMIN_PORT: '8081', OPS_PORT: '8081' })).toThrow(
      'OPS_PORT must be a port other than ADMIN_PORT (8081) (got "8081")',
    );
  });

  it('serves /docs unless DOCS=off, and refuses any other value', () => {
    expect(loadConfig({}).docs).toBe(true);
    expect(loadConfig({ DOCS: 'on' }).docs).toBe(true);
    expect(loadConfig({ DOCS: 'off' }).docs).toBe(false);
    expect(() => loadConfig({ DOCS: 'no' })).toThrow('DOCS must be one of on, off (got "no")');
  });
});
