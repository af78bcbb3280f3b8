// Building the page's DOM from text only. Nothing here (or anywhere in the page) assigns HTML:
// every string, a sender's subject or file name included, becomes a text node or an attribute
// value, never markup. The page's Content-Security-Policy requires Trusted Types with no policy,
// so that an HTML sink such as innerHTML would throw even if some code tried.

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(element, props) {
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.setAttribute("class", value);
    else if (name === "text") element.textContent = String(value);
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** h("a", {href: "#/jobs", class: "x"}, "text", child, ...): an HTML element. */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  apply(element, props);
  append(element, children);
  return element;
}

/** s("rect", {x: 1, ...}): an SVG element. */
export function s(tag, props, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  apply(element, props);
  append(element, children);
  return element;
}

export function replace(container, ...children) {
  container.replaceChildren();
  append(container, children);
}
