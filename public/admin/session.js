// @ts-check
// The operator's Supabase Auth session, talking to Auth directly with the publishable key (the only
// key the page has): POST /auth/v1/token?grant_type=password and ?grant_type=refresh_token, and
// POST /auth/v1/logout.
//
// The session lives in localStorage, shared by every tab of the page. Its access token is renewed
// before it expires (at most a minute before; earlier for short-lived tokens) by one tab alone: the
// tab holding a Web Lock that tabs queue for (when it closes, the next one takes it). Refresh
// tokens are single-use, and localStorage reaches other tabs a moment late, so two tabs that each
// refreshed would sooner or later use one twice and end the session. The others take the new
// session from the storage event; one that finds its token expired asks the refreshing tab (a
// BroadcastChannel) and waits. A renewal that Auth refuses ends the session at once, in every tab,
// with a message; one that cannot reach Auth is tried again until the access token expires, and
// then the session ends, with a message.

const STORAGE_KEY = "document-jobs-admin-session";
const ENDED_KEY = "document-jobs-admin-ended"; // why the session ended, for the other tabs
const LOCK_NAME = "document-jobs-admin-refresher";
const WAIT_FOR_RENEWAL_MS = 15000;
const API_VERSION = "2024-01-01"; // Auth's error shape: {"code", "message"}
const RETRY_AFTER_MS = 5000;

/**
 * The session as this page stores it: Auth's answer, trimmed.
 * @typedef {object} Session
 * @property {string} access_token
 * @property {string} refresh_token
 * @property {number} expires_at seconds since the epoch
 * @property {number} [expires_in] the access token's lifetime, in seconds
 * @property {{ id?: string, email?: string }} user
 */
/**
 * Auth's answer to a sign-in or a renewal.
 * @typedef {object} TokenAnswer
 * @property {string} access_token
 * @property {string} refresh_token
 * @property {number} expires_at
 * @property {number} [expires_in]
 * @property {{ id?: string, email?: string }} [user]
 */
/** @typedef {{ code?: string, error_code?: string, message?: string, msg?: string }} AuthProblem Auth's refusal */

/** @param {string} name the page's <meta name=...> that carries the value */
function setting(name) {
  const meta = document.querySelector(`meta[name="${name}"]`);
  if (!(meta instanceof HTMLMetaElement)) throw new Error(`the page has no <meta name="${name}">`);
  return meta.content;
}

const config = {
  url: setting("document-jobs-supabase-url"),
  key: setting("document-jobs-supabase-key"),
};

/** @type {number | undefined} */
let timer;
let refresher = !navigator.locks; // without Web Locks (an old browser), every tab renews its own
/** @type {(reason: string) => void} */
let onEnded = () => {};
/** @type {(session: Session) => void} */
let onChanged = () => {};
const channel = "BroadcastChannel" in window ? new BroadcastChannel(LOCK_NAME) : null;

export class AuthRefused extends Error {
  /**
   * @param {number} status
   * @param {string | undefined} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** @returns {Session | null} */
function stored() {
  try {
    const session = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null");
    return session && session.access_token && session.refresh_token ? session : null;
  } catch {
    return null;
  }
}

/** @param {TokenAnswer} answer */
function store(answer) {
  const session = {
    access_token: answer.access_token,
    refresh_token: answer.refresh_token,
    expires_at: answer.expires_at,
    expires_in: answer.expires_in,
    user: { id: answer.user?.id, email: answer.user?.email },
  };
  localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  schedule(session);
  onChanged(session);
  return session;
}

/**
 * POST /auth/v1/<path>: Auth's JSON answer, or AuthRefused.
 * @param {string} path
 * @param {Record<string, string>} body
 * @param {string} [accessToken]
 * @returns {Promise<unknown>}
 */
async function auth(path, body, accessToken) {
  /** @type {Record<string, string>} */
  const headers = { apikey: config.key, "Content-Type": "application/json", "X-Supabase-Api-Version": API_VERSION };
  if (accessToken) headers.Authorization = `Bearer ${accessToken}`;
  const response = await fetch(`${config.url}/auth/v1/${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body ?? {}),
    credentials: "omit",
  });
  const data = response.status === 204 ? {} : await response.json().catch(() => ({}));
  if (!response.ok) {
    const problem = /** @type {AuthProblem} */ (data);
    throw new AuthRefused(response.status, problem.code ?? problem.error_code, problem.message ?? problem.msg ?? response.statusText);
  }
  return data;
}

/** @param {Session} session */
function secondsLeft(session) {
  return session.expires_at - Date.now() / 1000;
}

// Renew at most a minute before expiry, and never later than halfway through a short token's life.
/** @param {Session} session */
function renewAt(session) {
  const margin = Math.min(60, (session.expires_in || 3600) / 2);
  return (session.expires_at - margin) * 1000;
}

/** @param {Session | null} session */
function schedule(session) {
  clearTimeout(timer);
  if (!refresher || !session) return;
  timer = setTimeout(() => renew(session.refresh_token).catch(() => {}), Math.max(0, renewAt(session) - Date.now()));
}

/**
 * Sign in; the session, or AuthRefused with Auth's own message (a wrong password: "Invalid login credentials").
 * @param {string} email
 * @param {string} password
 */
export async function signIn(email, password) {
  return store(/** @type {TokenAnswer} */ (await auth("token?grant_type=password", { email, password })));
}

/**
 * The refreshing tab's renewal of the session whose refresh token is `used` (unless already renewed).
 * @param {string | undefined} used
 * @returns {Promise<Session>}
 */
async function renew(used) {
  const current = stored();
  if (!current) throw new AuthRefused(401, "no_session", "signed out");
  if (current.refresh_token !== used) {
    schedule(current);
    return current;
  }
  try {
    return store(/** @type {TokenAnswer} */ (await auth("token?grant_type=refresh_token", { refresh_token: current.refresh_token })));
  } catch (error) {
    if (error instanceof AuthRefused && error.status >= 400 && error.status < 500) {
      end("signedOut.expired");
      throw error;
    }
    // Auth unreachable: try again while the access token lasts, then give up.
    if (secondsLeft(current) > RETRY_AFTER_MS / 1000) {
      clearTimeout(timer);
      timer = setTimeout(() => renew(current.refresh_token).catch(() => {}), RETRY_AFTER_MS);
    } else {
      end("signedOut.expired");
    }
    throw error;
  }
}

/**
 * Another tab's: ask the refreshing tab, and wait for the renewed session to arrive.
 * @param {string | undefined} used
 * @returns {Promise<Session>}
 */
function renewal(used) {
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => {
      window.removeEventListener("storage", arrived);
      reject(new AuthRefused(401, "no_renewal", "the session was not renewed"));
    }, WAIT_FOR_RENEWAL_MS);
    /** @param {StorageEvent} event */
    function arrived(event) {
      if (event.key !== STORAGE_KEY) return;
      const next = stored();
      clearTimeout(deadline);
      window.removeEventListener("storage", arrived);
      if (next && next.refresh_token !== used) resolve(next);
      else reject(new AuthRefused(401, "no_session", "signed out"));
    }
    window.addEventListener("storage", arrived);
    channel?.postMessage({ renew: used });
  });
}

/**
 * A new access token for the session whose refresh token is `used`, unless it was renewed already.
 * @param {string | undefined} used
 */
export async function refresh(used) {
  return refresher ? renew(used) : renewal(used);
}

/** The current access token, renewed first when it has expired. */
export async function accessToken() {
  const session = stored();
  if (!session) throw new AuthRefused(401, "no_session", "signed out");
  if (secondsLeft(session) > 5) return session.access_token;
  return (await refresh(session.refresh_token)).access_token;
}

/** @param {string} reason the key of the message that says why */
function end(reason) {
  clearTimeout(timer);
  localStorage.setItem(ENDED_KEY, reason);
  localStorage.removeItem(STORAGE_KEY);
  onEnded(reason);
}

/** Sign out here (Auth ends this session; its refresh token stops working). */
export async function signOut(reason = "signedOut.byYou") {
  const session = stored();
  end(reason);
  if (session) await auth("logout?scope=local", {}, session.access_token).catch(() => {});
}

/**
 * The session ended for a reason the server gave (the API answered 401): forget it here.
 * @param {string} reason
 */
export function ended(reason) {
  end(reason);
}

export function current() {
  return stored();
}

/**
 * Start watching: `changed(session)` after every renewal, `endedWith(reasonKey)` once it ends.
 * @param {(session: Session) => void} changed
 * @param {(reason: string) => void} endedWith
 */
export function watch(changed, endedWith) {
  onChanged = changed;
  onEnded = endedWith;
  // Queue for the refresher's lock; held for as long as this tab lives.
  navigator.locks?.request(LOCK_NAME, () => {
    refresher = true;
    schedule(stored());
    return new Promise(() => {});
  });
  channel?.addEventListener("message", (event) => {
    if (refresher && event.data?.renew) renew(event.data.renew).catch(() => {});
  });
  // Other tabs: a renewal there, a sign-in, or the end of the session.
  window.addEventListener("storage", (event) => {
    if (event.key !== STORAGE_KEY) return;
    const next = stored();
    if (next) {
      schedule(next);
      onChanged(next);
    } else {
      clearTimeout(timer);
      const reason = localStorage.getItem(ENDED_KEY);
      onEnded(reason && reason !== "signedOut.byYou" ? reason : "signedOut.otherTab");
    }
  });
}
