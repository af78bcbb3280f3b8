// @ts-check
// Building the page's DOM from text only. Nothing here (or anywhere in the page) assigns HTML:
// every string, a sender's subject or file name included, becomes a text node or an attribute
// value, never markup. The page's Content-Security-Policy requires Trusted Types with no policy,
// so that an HTML sink such as innerHTML would throw even if some code tried.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * An attribute's value (true: present and empty; null, undefined or false: absent), or, for a
 * name starting with "on", an event listener.
 * @typedef {string | number | boolean | null | undefined | ((event: Event) => unknown)} PropValue
 */
/** @typedef {Record<string, PropValue>} Props "class", "text", "on<event>", or any attribute's name */
/**
 * A child as given: a node, or text (null, undefined and false are left out).
 * @typedef {Node | string | number | null | undefined | false} Piece
 */
/** @typedef {Piece | Piece[]} Child a piece, or a list of them (flattened) */

/**
 * @param {Element} element
 * @param {Props | null | undefined} props
 */
function apply(element, props) {
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.setAttribute("class", String(value));
    else if (name === "text") element.textContent = String(value);
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
}

/**
 * @param {Element} element
 * @param {Child[]} children
 */
function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * h("a", {href: "#/jobs", class: "x"}, "text", child, ...): an HTML element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  apply(element, props);
  append(element, children);
  return element;
}

/**
 * s("rect", {x: 1, ...}): an SVG element.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, props, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  apply(element, props);
  append(element, children);
  return element;
}

/**
 * The container's children, all replaced by these.
 * @param {Element} container
 * @param {...Child} children
 */
export function replace(container, ...children) {
  container.replaceChildren();
  append(container, children);
}
