/**
 * The admin token lives in this tab's sessionStorage only: never localStorage, never a cookie. It
 * goes when the tab closes or the operator signs out, and when the API refuses it.
 */
const KEY = 'petstore.adminToken';

export const session = {
  token(): string | undefined {
    return sessionStorage.getItem(KEY) ?? undefined;
  },
  signIn(token: string): void {
    sessionStorage.setItem(KEY, token);
  },
  signOut(): void {
    sessionStorage.removeItem(KEY);
  },
};
