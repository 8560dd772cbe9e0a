/**
 * RFC 3339 times read strictly: a date that exists (no 30 February rolled into March), hours,
 * minutes and offsets in range, and an instant between 1970 and the end of year 9999 in UTC, so
 * that every stored time can be written back as an ISO string (a later year cannot).
 */
const RFC3339_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The earliest and latest instants accepted, epoch ms. */
export const EARLIEST_TIME_MS = 0;
export const LATEST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const daysIn = (year: number, month: number) =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

/** The instant an RFC 3339 time names (epoch ms), or undefined when it is not one or out of range. */
export function parseRfc3339(text: string): number | undefined {
  const match = RFC3339_TIME.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (match[9] !== undefined) {
    const offsetHours = Number(match[10]);
    const offsetMins = Number(match[11]);
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const fraction = match[7] === undefined ? 0 : Math.floor(Number(`0${match[7]}`) * 1000);
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, fraction);
  const at = utc.getTime() - offsetMinutes * 60_000;
  if (at < EARLIEST_TIME_MS || at > LATEST_TIME_MS) return undefined;
  return at;
}

/** What a person is told when a time is refused. */
export const RFC3339_HINT =
  'an RFC 3339 time with its offset, like 2027-01-31T12:00:00Z, of a date that exists, between 1970 and 9999';
