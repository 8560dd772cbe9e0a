/** A tiny element builder: no framework, no innerHTML, so nothing the API returns is ever parsed as markup. */
type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`no #${id}`);
  return element as T;
}

/** A time as operators read it: UTC, to the minute; "never" for none. */
export function when(iso: string | null | undefined, none = 'never'): string {
  if (iso === null || iso === undefined) return none;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}
