// The viewer's test page (tests/support/viewer_harness.py): mounts public/admin/viewer.js with the
// fax that ?fax= names, as the inbox will, and keeps what the viewer reports where the test reads it.
import { mountViewer } from "/admin/viewer.js";

const id = new URLSearchParams(location.search).get("fax");
const fax = await (await fetch(`/viewer-harness/fax/${encodeURIComponent(id ?? "")}`)).json();
const app = document.getElementById("app");
window.viewerRotations = [];
window.viewer = mountViewer(app, {
  documents: fax.documents.map((d) => ({ ...d, download: async () => {
    if (d.downloadFails) throw new Error("the server refused");
    return d.downloadUrl;
  } })),
  rotation: fax.rotation,
  label: fax.label ?? undefined,
  onRotate: (rotation) => window.viewerRotations.push(rotation),
});
