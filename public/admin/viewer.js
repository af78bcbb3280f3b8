// @ts-check
// The fax viewer: a fax's documents, their pages drawn on the screen one by one, on a desktop and
// on a phone, with page navigation, zoom, rotation by 90°, print and the original's download.
//
// A PDF (the original, or the viewing PDF the server made from a TIFF) is drawn by Mozilla's PDF.js
// (vendor/pdfjs/, the pinned pdfjs-dist's files, copied by `make vendor`), loaded only when a fax is
// first opened; a JPEG or PNG is drawn as it is; any other file is named and downloadable.
//
// Under the page's policy (lib/screen/page.py): PDF.js parses in a Web Worker that this module
// starts itself from a TrustedScriptURL of the one Trusted Types policy the page allows
// (WORKER_POLICY), and hands to PDF.js as its worker port. The worker is a static file, and static
// files are served with `default-src 'none'` (vercel.json), which a dedicated worker keeps as its own
// policy: it may fetch nothing, compile no WebAssembly and evaluate nothing. So PDF.js is told that
// (isEvalSupported: false, its font programs are interpreted instead of compiled), its CMaps and
// standard fonts are fetched by the page (useWorkerFetch: false, under connect-src 'self') and
// handed to the worker, and its WebAssembly decoders stay off (useWasm: false): its JavaScript
// decoders read what faxes are made of (CCITT G3/G4, JBIG2, JPEG).
//
// Only the pages in view and their neighbours hold a canvas: a page scrolled away gives its bitmap
// back, so a 50-page fax never holds 50 of them. Printing draws every page once more, for paper,
// one at a time into images that the print style sheet alone shows.

import { h, replace } from "./dom.js";
import { t } from "./i18n.js";

/** @typedef {typeof import("pdfjs-dist")} PdfJs */
/** @typedef {import("pdfjs-dist").PDFDocumentProxy} PdfDocument */
/** @typedef {import("pdfjs-dist").PDFPageProxy} PdfPage */
/** @typedef {import("pdfjs-dist").PDFDocumentLoadingTask} PdfLoadingTask */
/** @typedef {import("./dom.js").Child} Child */

/**
 * One file of a fax, as the viewer is given it.
 * @typedef {object} FaxDocument
 * @property {string} name the original's download name (shown as text, never as markup)
 * @property {"pdf" | "picture" | "none"} kind what there is to draw: a PDF (the original's, or the
 *   viewing PDF made from a TIFF), a picture (a JPEG or PNG, drawn as it is), or nothing
 * @property {string} [url] the PDF's or the picture's URL (a signed Storage URL; Storage answers
 *   with Access-Control-Allow-Origin, which the picture's canvas needs too)
 * @property {string} [note] why there is nothing to draw (kind "none"), in the page's language;
 *   a general sentence when missing
 * @property {() => Promise<string>} download the original's download URL (asked when the button is pressed)
 */
/**
 * @typedef {object} ViewerOptions
 * @property {FaxDocument[]} documents the fax's files, in their order
 * @property {number} [rotation] the pages' rotation to start with, clockwise: 0, 90, 180 or 270
 * @property {(rotation: number) => void} [onRotate] told each new rotation (the page keeps it per fax)
 * @property {string} [label] the viewer's accessible name (e.g. the fax's sender)
 * @property {(error: unknown) => Child} [problem] a failed download said in the page's words
 */
/**
 * @typedef {object} Viewer
 * @property {HTMLElement} element the viewer (already in its container)
 * @property {(page: number) => void} goTo shows page `page` (1-based over all documents)
 * @property {() => Promise<void>} print draws every page for paper, then opens the print dialog
 * @property {() => void} destroy stops drawing and gives everything back (worker, bitmaps, listeners)
 */
/**
 * Something drawing into a canvas.
 * @typedef {{ promise: Promise<void>, cancel(): void }} Drawing
 */
/**
 * @typedef {object} Page
 * @property {number} number 1-based over the whole fax
 * @property {DocumentView} doc
 * @property {number} width its width at 100 % (CSS px), as its file sets it up
 * @property {number} height
 * @property {(canvas: HTMLCanvasElement, scale: number, rotation: number, intent: "display" | "print") => Drawing} draw
 *   draws it at `scale` canvas pixels per CSS px at 100 %, turned `rotation` degrees clockwise
 * @property {() => void} release what its file keeps for it once it has no canvas
 * @property {HTMLDivElement} box
 * @property {HTMLCanvasElement | null} canvas
 * @property {string | null} drawn how its canvas was drawn (see drawKey), or nothing yet
 * @property {Drawing | null} drawing
 * @property {string | null} drawingKey
 */
/**
 * @typedef {object} DocumentView
 * @property {FaxDocument} source
 * @property {HTMLElement} section
 * @property {Page[]} pages
 */

const PDFJS = new URL("./vendor/pdfjs/pdf.min.mjs", import.meta.url).href;
const WORKER = new URL("./vendor/pdfjs/pdf.worker.min.mjs", import.meta.url).href;
const CMAPS = new URL("./vendor/pdfjs/cmaps/", import.meta.url).href;
const STANDARD_FONTS = new URL("./vendor/pdfjs/standard_fonts/", import.meta.url).href;
// The Trusted Types policy that lib/screen/page.py's policy names: the only one the page may create.
export const WORKER_POLICY = "pdfjs-worker";

const CSS_PX_PER_POINT = 96 / 72; // a PDF at 100 % is its size on paper
const ZOOMS = [0.25, 0.33, 0.5, 0.67, 0.75, 0.9, 1, 1.25, 1.5, 2, 3, 4]; // times the fitted width
const PRINT_DPI = 150; // a fax's finest mode is 204 × 196 dpi; an office printer prints 150 dpi crisply
const MAX_CANVAS_PIXELS = 16_777_216; // the area a phone's browser draws a canvas of, at most (iOS)
const MAX_PICTURE_PRINT_PX = 2400; // a photo's longer side for paper
const GAP_PX = 12; // between pages, and around them (admin.css .viewer-pages)

/**
 * @typedef {{ createPolicy(name: string, rules: { createScriptURL(url: string): string }): { createScriptURL(url: string): unknown } }} TrustedTypes
 */
/** @type {{ createScriptURL(url: string): unknown } | null} made once: a page creates a policy's name once */
let workerPolicy = null;

/** A Web Worker running PDF.js's worker script, started from a TrustedScriptURL where the browser has Trusted Types. */
function startWorker() {
  const trustedTypes = /** @type {TrustedTypes | undefined} */ (Reflect.get(globalThis, "trustedTypes"));
  if (trustedTypes && !workerPolicy) {
    workerPolicy = trustedTypes.createPolicy(WORKER_POLICY, {
      createScriptURL(url) {
        if (url !== WORKER) throw new TypeError(`${WORKER_POLICY} vouches for PDF.js's worker only, not ${url}`);
        return url;
      },
    });
  }
  const url = workerPolicy ? workerPolicy.createScriptURL(WORKER) : WORKER;
  return new Worker(/** @type {string} */ (url), { type: "module", name: "pdf.js" });
}

/**
 * @param {number} rotation
 * @returns {number} 0, 90, 180 or 270
 */
function rightAngle(rotation) {
  return ((Math.round(rotation / 90) * 90) % 360 + 360) % 360;
}

/**
 * The scale (canvas px per CSS px) a canvas of this size may be drawn at, its area capped.
 * @param {number} width CSS px
 * @param {number} height
 */
function outputScale(width, height) {
  const wanted = window.devicePixelRatio || 1;
  return Math.min(wanted, Math.sqrt(MAX_CANVAS_PIXELS / Math.max(1, width * height)));
}

/** @param {HTMLCanvasElement} canvas its bitmap given back at once (a removed canvas keeps it until collected) */
function freeCanvas(canvas) {
  canvas.width = 0;
  canvas.height = 0;
  canvas.remove();
}

/**
 * A PDF page as the viewer draws it.
 * @param {PdfPage} pdfPage
 * @param {PdfJs} pdfjs
 * @returns {Pick<Page, "width" | "height" | "draw" | "release">}
 */
function pdfPageDrawing(pdfPage, pdfjs) {
  const natural = pdfPage.getViewport({ scale: CSS_PX_PER_POINT });
  return {
    width: natural.width,
    height: natural.height,
    draw(canvas, scale, rotation, intent) {
      const viewport = pdfPage.getViewport({ scale: CSS_PX_PER_POINT * scale, rotation: rightAngle(pdfPage.rotate + rotation) });
      canvas.width = Math.max(1, Math.floor(viewport.width));
      canvas.height = Math.max(1, Math.floor(viewport.height));
      const task = pdfPage.render({
        canvas, viewport, intent, background: "#ffffff",
        annotationMode: intent === "print" ? pdfjs.AnnotationMode.ENABLE_STORAGE : pdfjs.AnnotationMode.ENABLE,
      });
      return { promise: task.promise, cancel: () => task.cancel() };
    },
    release: () => void pdfPage.cleanup(),
  };
}

/**
 * A picture (JPEG, PNG) as one page.
 * @param {HTMLImageElement} image decoded
 * @returns {Pick<Page, "width" | "height" | "draw" | "release">}
 */
function pictureDrawing(image) {
  return {
    width: image.naturalWidth,
    height: image.naturalHeight,
    draw(canvas, scale, rotation) {
      const turned = rotation % 180 !== 0;
      const width = Math.max(1, Math.floor(image.naturalWidth * scale));
      const height = Math.max(1, Math.floor(image.naturalHeight * scale));
      canvas.width = turned ? height : width;
      canvas.height = turned ? width : height;
      const context = canvas.getContext("2d");
      if (!context) return { promise: Promise.reject(new Error("no 2d canvas")), cancel() {} };
      context.fillStyle = "#ffffff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.translate(canvas.width / 2, canvas.height / 2);
      context.rotate((rotation * Math.PI) / 180);
      context.drawImage(image, -width / 2, -height / 2, width, height);
      return { promise: Promise.resolve(), cancel() {} };
    },
    release() {},
  };
}

/**
 * @param {string} url
 * @returns {Promise<HTMLImageElement>}
 */
async function loadPicture(url) {
  const image = new Image();
  image.crossOrigin = "anonymous"; // drawn into a canvas that printing reads back
  image.src = url;
  await image.decode();
  return image;
}

/** @param {HTMLCanvasElement} canvas @returns {Promise<string>} a data: URL (the policy allows data: images) */
function pictureOf(canvas) {
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => {
      if (!blob) return reject(new Error("the page could not be turned into a picture"));
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result));
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(blob);
    }, "image/png");
  });
}

/** @param {unknown} error */
function isCancelled(error) {
  return error instanceof Error && error.name === "RenderingCancelledException";
}

/**
 * Shows a fax's documents in `container` (whose content it replaces).
 * @param {Element} container
 * @param {ViewerOptions} options
 * @returns {Viewer}
 */
export function mountViewer(container, options) {
  let rotation = rightAngle(options.rotation ?? 0);
  let zoom = 1; // times the fitted width
  let current = 1; // the page in view
  let pinned = 0; // the page last gone to: the current one while it is in view (several may be, zoomed out)
  let refreshing = false; // a refresh is asked for the next frame
  let typing = false; // a page number is being typed, not yet entered
  let destroyed = false;
  /** @type {Page | null} */
  let drawingPage = null;
  /** @type {Worker | null} */
  let worker = null;
  /** @type {PdfLoadingTask[]} */
  const loading = [];
  /** @type {DocumentView[]} */
  const documents = [];
  /** @type {Page[]} */
  const pages = [];
  /** @type {HTMLElement | null} */
  let printSheet = null;

  const button = (/** @type {string} */ key, /** @type {() => unknown} */ action, /** @type {string} */ name) =>
    h("button", { type: "button", class: `viewer-${name}`, onclick: () => void action() }, t(key));
  const previous = button("viewer.previous", () => goTo(current - 1), "previous");
  const next = button("viewer.next", () => goTo(current + 1), "next");
  const pageInput = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", class: "viewer-page-number",
    "aria-label": t("viewer.pageNumber"), value: "1", size: 3 });
  const pageCount = h("span", { class: "viewer-page-count" });
  const zoomOut = button("viewer.zoomOut", () => setZoom(stepZoom(-1)), "zoom-out");
  const fitWidth = button("viewer.fitWidth", () => setZoom(1), "fit-width");
  const zoomIn = button("viewer.zoomIn", () => setZoom(stepZoom(1)), "zoom-in");
  const zoomLevel = h("span", { class: "viewer-zoom-level", "aria-hidden": "true" });
  const rotate = button("viewer.rotate", () => setRotation(rotation + 90), "rotate");
  const print = button("viewer.print", () => printPages(), "print");
  const download = button("viewer.download", () => downloadOriginal(pages[current - 1]?.doc ?? documents[0]), "download");
  const status = h("p", { class: "viewer-status visually-hidden", "aria-live": "polite", "aria-atomic": "true" });
  const report = h("div", { class: "viewer-report" });
  const area = h("div", { class: "viewer-pages", tabindex: 0, role: "region", "aria-label": t("viewer.pages") },
    h("p", { class: "viewer-loading" }, t("viewer.loading")));
  const toolbar = h("div", { class: "viewer-toolbar", role: "group", "aria-label": t("viewer.controls") },
    h("span", { class: "viewer-group" }, previous,
      h("span", { class: "viewer-position" }, pageInput, pageCount), next),
    h("span", { class: "viewer-group" }, zoomOut, fitWidth, zoomIn, zoomLevel),
    h("span", { class: "viewer-group" }, rotate, print, download));
  const element = h("section", { class: "viewer", "aria-label": options.label ?? t("viewer.region") },
    toolbar, status, report, area);
  replace(container, element);

  pageInput.addEventListener("input", () => {
    typing = true;
  });
  pageInput.addEventListener("change", () => {
    typing = false;
    const wanted = Number.parseInt(pageInput.value.replace(/[０-９]/g, (d) => String(d.charCodeAt(0) - 0xff10)), 10);
    if (Number.isFinite(wanted)) goTo(wanted);
    pageInput.value = String(current);
  });
  pageInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") pageInput.dispatchEvent(new Event("change"));
  });
  pageInput.addEventListener("blur", () => {
    typing = false;
    pageInput.value = String(current);
  });
  element.addEventListener("keydown", onKey);
  document.addEventListener("keydown", onPrintKey);
  area.addEventListener("scroll", () => {
    if (refreshing) return;
    refreshing = true;
    requestAnimationFrame(() => {
      refreshing = false;
      refresh();
    });
  }, { passive: true });
  const resized = new ResizeObserver(() => layout());
  resized.observe(area);
  window.addEventListener("afterprint", endPrint);

  /** @param {KeyboardEvent} event */
  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const inField = event.target === pageInput;
    /** @type {Record<string, () => void>} */
    const keys = {
      PageDown: () => goTo(current + 1),
      PageUp: () => goTo(current - 1),
      ArrowRight: () => goTo(current + 1),
      ArrowLeft: () => goTo(current - 1),
      Home: () => goTo(1),
      End: () => goTo(pages.length),
    };
    const action = keys[event.key];
    if (!action || (inField && event.key !== "PageDown" && event.key !== "PageUp")) return;
    event.preventDefault();
    action();
  }

  /** @param {KeyboardEvent} event Ctrl+P or ⌘P prints the fax's pages, not the screen */
  function onPrintKey(event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "p") {
      event.preventDefault();
      void printPages();
    }
  }

  /** @param {string} text */
  function announce(text) {
    status.textContent = text;
  }

  /** @param {number} direction 1: in, -1: out */
  function stepZoom(direction) {
    const index = ZOOMS.findIndex((z) => z >= zoom - 1e-6);
    const at = index < 0 ? ZOOMS.length - 1 : index;
    const exact = Math.abs(ZOOMS[at] - zoom) < 1e-6;
    const to = direction > 0 ? (exact ? at + 1 : at) : at - 1;
    return ZOOMS[Math.min(ZOOMS.length - 1, Math.max(0, to))];
  }

  /** @param {number} value */
  function setZoom(value) {
    zoom = value;
    layout();
    announce(t("viewer.zoomed", { percent: percent() }));
  }

  /** @param {number} value */
  function setRotation(value) {
    rotation = rightAngle(value);
    for (const page of pages) dropCanvas(page); // its old shape would show stretched until drawn again
    layout();
    announce(t("viewer.rotated", { degrees: rotation }));
    options.onRotate?.(rotation);
  }

  /** @param {Page} page its size on the screen now (CSS px) */
  function shown(page) {
    const turned = rotation % 180 !== 0;
    const width = turned ? page.height : page.width;
    const height = turned ? page.width : page.height;
    const room = Math.max(120, area.clientWidth - 2 * GAP_PX);
    const scale = (room * zoom) / width;
    return { width: width * scale, height: height * scale, scale };
  }

  function percent() {
    const page = pages[current - 1];
    return page ? Math.round(shown(page).scale * 100) : 100;
  }

  /** The pages' boxes sized for the zoom and rotation, the page in view kept in view. */
  function layout() {
    if (destroyed) return;
    const page = pages[current - 1];
    const before = page ? (area.scrollTop - page.box.offsetTop) / Math.max(1, page.box.offsetHeight) : 0;
    for (const each of pages) {
      const { width, height } = shown(each);
      each.box.style.width = `${Math.round(width)}px`;
      each.box.style.height = `${Math.round(height)}px`;
    }
    if (page) area.scrollTop = page.box.offsetTop + before * page.box.offsetHeight;
    zoomLevel.textContent = `${percent()}%`;
    zoomOut.disabled = zoom <= ZOOMS[0];
    zoomIn.disabled = zoom >= ZOOMS[ZOOMS.length - 1];
    refresh();
  }

  /** @param {number} number */
  function goTo(number) {
    if (!pages.length) return;
    const page = pages[Math.min(pages.length, Math.max(1, Math.round(number))) - 1];
    area.scrollTop = page.box.offsetTop - GAP_PX;
    pinned = page.number;
    setCurrent(page.number);
    refresh();
  }

  /** @param {number} number */
  function setCurrent(number) {
    const changed = number !== current;
    current = number;
    // Not while a number is being typed: a scroll's refresh would overwrite it before Enter.
    if (!typing) pageInput.value = String(current);
    previous.disabled = current <= 1;
    next.disabled = current >= pages.length;
    const doc = pages[current - 1]?.doc;
    if (doc) download.title = `${t("viewer.download")}: ${doc.source.name}`;
    if (changed) announce(t("viewer.pageStatus", { page: current, count: pages.length }));
  }

  /** @param {Page} page */
  function drawKey(page) {
    const { width, height } = shown(page);
    return `${rotation}:${Math.round(width)}x${Math.round(height)}@${outputScale(width, height)}`;
  }

  /** @param {Page} page its canvas and its drawing gone */
  function dropCanvas(page) {
    if (page.drawing) page.drawing.cancel();
    if (page.canvas) {
      freeCanvas(page.canvas);
      page.canvas = null;
      page.drawn = null;
      page.release();
    }
  }

  /** Which pages are in view: the current one follows the scroll, only those and their neighbours keep a canvas. */
  function refresh() {
    if (destroyed || !pages.length) return;
    const top = area.scrollTop;
    const bottom = top + area.clientHeight;
    let first = -1;
    let last = -1;
    let most = 0;
    let inView = current;
    let pinnedInView = false;
    for (const page of pages) {
      const seen = Math.min(bottom, page.box.offsetTop + page.box.offsetHeight) - Math.max(top, page.box.offsetTop);
      if (seen <= 0) continue;
      if (first < 0) first = page.number;
      last = page.number;
      pinnedInView ||= page.number === pinned;
      if (seen > most + 0.5) {
        most = seen;
        inView = page.number;
      }
    }
    if (first < 0) first = last = current;
    if (!pinnedInView) pinned = 0;
    setCurrent(pinned || inView);
    const wanted = new Set();
    for (let number = Math.min(first, current) - 1; number <= Math.max(last, current) + 1; number += 1) wanted.add(number);
    for (const page of pages) {
      if (!wanted.has(page.number)) dropCanvas(page);
      else if (page.drawing && page.drawingKey !== drawKey(page)) page.drawing.cancel();
    }
    drawNext([...wanted].sort((a, b) => Math.abs(a - current) - Math.abs(b - current)));
  }

  /** @param {number[]} order the pages wanted, the nearest first: one is drawn at a time */
  function drawNext(order) {
    if (drawingPage || destroyed) return;
    const page = order.map((number) => pages[number - 1]).find((each) => each && each.drawn !== drawKey(each));
    if (!page) return;
    const key = drawKey(page);
    const { width, height } = shown(page);
    const scale = outputScale(width, height);
    const canvas = h("canvas", { "aria-hidden": "true" });
    drawingPage = page;
    page.drawingKey = key;
    page.drawing = page.draw(canvas, shown(page).scale * scale, rotation, "display");
    page.drawing.promise.then(() => {
      if (destroyed || page.drawingKey !== key) return freeCanvas(canvas);
      if (page.canvas) freeCanvas(page.canvas);
      page.canvas = canvas;
      page.drawn = key;
      page.box.replaceChildren(canvas);
      page.box.classList.remove("failed");
    }, (/** @type {unknown} */ error) => {
      freeCanvas(canvas);
      if (!isCancelled(error) && !destroyed) {
        page.drawn = key; // not tried again until the zoom or the rotation changes
        page.box.classList.add("failed");
        replace(page.box, h("p", { class: "notice error" }, t("viewer.pageFailed", { page: page.number })));
      }
    }).finally(() => {
      page.drawing = null;
      page.drawingKey = null;
      drawingPage = null;
      if (!destroyed) refresh();
    });
  }

  /** @param {DocumentView | undefined} doc */
  async function downloadOriginal(doc) {
    if (!doc) return;
    try {
      const url = await doc.source.download();
      window.location.assign(url); // a navigation (Content-Disposition: attachment), not a fetch
    } catch (error) {
      replace(report, h("p", { class: "notice error", role: "alert" },
        options.problem ? options.problem(error) : t("viewer.downloadFailed")));
    }
  }

  async function printPages() {
    if (!pages.length || print.disabled) return;
    print.disabled = true;
    endPrint();
    const sheet = h("div", { class: "viewer-print-sheet" });
    try {
      for (const page of pages) {
        announce(t("viewer.preparingPrint", { page: page.number, count: pages.length }));
        const canvas = h("canvas");
        const isPicture = page.doc.source.kind === "picture";
        const scale = isPicture ? Math.min(1, MAX_PICTURE_PRINT_PX / Math.max(page.width, page.height)) : PRINT_DPI / 96;
        await page.draw(canvas, scale, rotation, "print").promise;
        const picture = await pictureOf(canvas);
        freeCanvas(canvas);
        if (destroyed) return;
        sheet.append(h("img", { src: picture, alt: t("viewer.pageLabel", { page: page.number }) }));
      }
    } catch (error) {
      replace(report, h("p", { class: "notice error", role: "alert" }, t("viewer.printFailed")));
      return;
    } finally {
      print.disabled = false;
    }
    printSheet = sheet;
    document.body.append(sheet);
    document.body.classList.add("viewer-printing");
    announce(t("viewer.printReady"));
    window.print();
  }

  function endPrint() {
    printSheet?.remove();
    printSheet = null;
    document.body.classList.remove("viewer-printing");
  }

  /**
   * @param {FaxDocument} source
   * @param {PdfJs | null} pdfjs
   */
  async function open(source, pdfjs) {
    const section = h("section", { class: "viewer-document", "aria-label": source.name },
      h("p", { class: "viewer-name" }, h("bdi", {}, source.name)));
    /** @type {DocumentView} */
    const doc = { source, section, pages: [] };
    documents.push(doc);
    area.append(section);
    /** @param {Child} text */
    const cannot = (text) => section.append(h("p", { class: "notice warning" }, text),
      h("div", { class: "buttons" }, h("button", { type: "button", class: "viewer-download-original",
        onclick: () => void downloadOriginal(doc) }, t("viewer.download"))));
    /** @type {Array<Pick<Page, "width" | "height" | "draw" | "release">>} */
    let drawings = [];
    try {
      if (source.kind === "pdf" && source.url && pdfjs) {
        worker ??= startWorker();
        const task = pdfjs.getDocument({
          url: source.url,
          worker: pdfjs.PDFWorker.create({ port: worker, verbosity: pdfjs.VerbosityLevel.ERRORS }),
          isEvalSupported: false,
          useWorkerFetch: false,
          useWasm: false,
          cMapUrl: CMAPS,
          cMapPacked: true,
          standardFontDataUrl: STANDARD_FONTS,
          enableXfa: false,
          verbosity: pdfjs.VerbosityLevel.ERRORS, // its warnings (a font it substitutes, a decoder it falls back from) are for developers
        });
        loading.push(task);
        const pdf = await task.promise;
        const pdfPages = await Promise.all(Array.from({ length: pdf.numPages }, (_, i) => pdf.getPage(i + 1)));
        drawings = pdfPages.map((pdfPage) => pdfPageDrawing(pdfPage, pdfjs));
      } else if (source.kind === "picture" && source.url) {
        drawings = [pictureDrawing(await loadPicture(source.url))];
      } else {
        cannot(source.note ?? t("viewer.cannotShow"));
        return;
      }
    } catch (error) {
      if (destroyed) return;
      const name = error instanceof Error ? error.name : "";
      cannot(t(name === "PasswordException" ? "viewer.password" : "viewer.loadFailed"));
      return;
    }
    if (destroyed) return;
    for (const drawing of drawings) {
      const number = pages.length + 1;
      /** @type {Page} */
      const page = { ...drawing, number, doc, canvas: null, drawn: null, drawing: null, drawingKey: null,
        box: h("div", { class: "viewer-page", role: "img", "aria-label": t("viewer.pageLabel", { page: number }),
          "data-page": number }) };
      doc.pages.push(page);
      pages.push(page);
      section.append(page.box);
    }
  }

  async function start() {
    /** @type {PdfJs | null} */
    let pdfjs = null;
    if (options.documents.some((d) => d.kind === "pdf" && d.url)) {
      try {
        pdfjs = /** @type {PdfJs} */ (await import(PDFJS));
      } catch {
        pdfjs = null; // each PDF then says it could not be shown, and offers its original
      }
    }
    if (destroyed) return;
    area.replaceChildren();
    if (!options.documents.length) area.append(h("p", {}, t("viewer.nothing")));
    for (const source of options.documents) await open(source, pdfjs);
    if (destroyed) return;
    pageCount.textContent = t("viewer.ofPages", { count: pages.length });
    for (const control of [pageInput, previous, next, zoomOut, fitWidth, zoomIn, rotate, print]) control.disabled = !pages.length;
    download.disabled = !documents.length;
    setCurrent(1);
    announce(t("viewer.pageStatus", { page: pages.length ? 1 : 0, count: pages.length }));
    layout();
  }

  for (const control of [pageInput, previous, next, zoomOut, fitWidth, zoomIn, rotate, print, download]) control.disabled = true;
  void start();

  return {
    element,
    goTo,
    print: printPages,
    destroy() {
      destroyed = true;
      for (const page of pages) dropCanvas(page);
      for (const task of loading) void task.destroy();
      worker?.terminate();
      resized.disconnect();
      document.removeEventListener("keydown", onPrintKey);
      window.removeEventListener("afterprint", endPrint);
      endPrint();
      element.remove();
    },
  };
}
