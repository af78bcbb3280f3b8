// @ts-check
// The admin API of this deployment (/api/admin/...), with the operator's access token. The server
// decides what anyone may do; the page only mirrors it.

import * as session from "./session.js";

/** @typedef {{ method?: "GET" | "POST", body?: unknown }} Options the body is sent as JSON */
/** @typedef {{ error?: string, message?: string }} Refusal the admin API's answer to what it refused */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string | undefined} code the API's error (none when the answer had no JSON)
   * @param {string | undefined} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** @type {Record<string, string>} the API's error: the key of the message that says why the session ended */
const ENDS_SESSION = { token_expired: "signedOut.expired", session_ended: "signedOut.ended", no_role: "signedOut.noRole" };

/**
 * @param {string} path
 * @param {Options} options
 * @param {string} token
 * @returns {Promise<{ response: Response, data: Refusal }>} data: the JSON answer (a refusal when not ok)
 */
async function send(path, options, token) {
  /** @type {Record<string, string>} */
  const headers = { Authorization: `Bearer ${token}` };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`/api/admin/${path}`, {
    method: options.method ?? "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => ({}));
  return { response, data };
}

/**
 * The JSON answer of GET/POST /api/admin/<path>; ApiError for a refusal. A 401 renews the token once.
 * The caller names what the answer holds (a typedef beside the view that reads it).
 * @param {string} path
 * @param {Options} [options]
 * @returns {Promise<unknown>}
 */
export async function api(path, options = {}) {
  let token;
  try {
    token = await session.accessToken();
  } catch (error) {
    throw new ApiError(401, "no_session", error instanceof Error ? error.message : String(error));
  }
  let { response, data } = await send(path, options, token);
  if (response.status === 401 && data.error === "token_expired") {
    token = (await session.refresh()).access_token;
    ({ response, data } = await send(path, options, token));
  }
  if (response.status === 401 || (response.status === 403 && data.error === "no_role")) {
    await session.ended(ENDS_SESSION[data.error ?? ""] ?? "signedOut.ended");
    throw new ApiError(response.status, data.error, data.message);
  }
  if (!response.ok) throw new ApiError(response.status, data.error ?? "error", data.message ?? response.statusText);
  return data;
}
