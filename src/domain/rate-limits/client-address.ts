import { isIP, isIPv4, isIPv6 } from 'node:net';

/** Longer than any IPv6 address in text (45 characters) with a short zone id. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The address a request is counted against. `forwarded` is what the trusted proxy setting made of
 * X-Forwarded-For (request.ip); it counts only when it parses as an IPv4 or IPv6 address. Anything
 * else (a made-up word, 16 KB of text) is not an address, and the request counts against the
 * connection's own address, the proxy's when behind one: a client cannot pick a budget by writing
 * junk, and junk is never kept as a key.
 */
export function clientAddress(forwarded: string | undefined, socketAddress: string): string {
  if (forwarded !== undefined && forwarded.length <= MAX_ADDRESS_LENGTH && isIP(forwarded) !== 0) {
    return forwarded;
  }
  return socketAddress;
}

/**
 * The budget an address draws on. IPv4 addresses count one by one; IPv6 ones by their /64, since
 * one host commonly holds a whole /64 and could otherwise rotate through it to dodge the limit.
 */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (isIPv4(address)) return address;
  const bare = address.split('%')[0] ?? address; // zone ids (fe80::1%eth0) name an interface, not a host
  if (!isIPv6(bare)) return address;
  return `${expandIPv6(bare).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address, without leading zeros. */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16).toString(16));
}
