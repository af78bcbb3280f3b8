// The operator's Supabase Auth session, talking to Auth directly with the publishable key (the only
// key the page has): POST /auth/v1/token?grant_type=password and ?grant_type=refresh_token, and
// POST /auth/v1/logout.
//
// The session lives in localStorage, shared by every tab of the page. The access token is renewed
// before it expires (at most a minute before; earlier for short-lived tokens) by one tab at a
// time: a Web Lock serializes the refreshers, and whoever holds it first reads the stored session
// again, so a tab that finds it already renewed uses that one. Refresh tokens are single-use, so
// two tabs refreshing the same one would end the session. A refresh that Auth refuses ends the
// session at once, with a message; one that cannot reach Auth is tried again until the access
// token expires, and then the session ends, with a message.

const STORAGE_KEY = "document-jobs-admin-session";
const LOCK_NAME = "document-jobs-admin-refresh";
const API_VERSION = "2024-01-01"; // Auth's error shape: {"code", "message"}
const RETRY_AFTER_MS = 5000;

const config = {
  url: document.querySelector('meta[name="document-jobs-supabase-url"]').content,
  key: document.querySelector('meta[name="document-jobs-supabase-key"]').content,
};

let timer = null;
let onEnded = () => {};
let onChanged = () => {};

export class AuthRefused extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function stored() {
  try {
    const session = JSON.parse(localStorage.getItem(STORAGE_KEY));
    return session && session.access_token && session.refresh_token ? session : null;
  } catch {
    return null;
  }
}

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

async function auth(path, body, accessToken) {
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
    throw new AuthRefused(response.status, data.code ?? data.error_code, data.message ?? data.msg ?? response.statusText);
  }
  return data;
}

function secondsLeft(session) {
  return session.expires_at - Date.now() / 1000;
}

// Renew at most a minute before expiry, and never later than halfway through a short token's life.
function renewAt(session) {
  const margin = Math.min(60, (session.expires_in || 3600) / 2);
  return (session.expires_at - margin) * 1000;
}

function schedule(session) {
  clearTimeout(timer);
  timer = setTimeout(() => refresh(session.refresh_token).catch(() => {}), Math.max(0, renewAt(session) - Date.now()));
}

/** Sign in; the session, or AuthRefused with Auth's own message (a wrong password: "Invalid login credentials"). */
export async function signIn(email, password) {
  return store(await auth("token?grant_type=password", { email, password }));
}

/** A new access token for the session whose refresh token is `used`, unless another tab already renewed it. */
export async function refresh(used) {
  const run = async () => {
    const current = stored();
    if (!current) throw new AuthRefused(401, "no_session", "signed out");
    if (current.refresh_token !== used && secondsLeft(current) > 0) {
      schedule(current); // another tab renewed it while we waited for the lock
      return current;
    }
    try {
      return store(await auth("token?grant_type=refresh_token", { refresh_token: current.refresh_token }));
    } catch (error) {
      if (error instanceof AuthRefused && error.status >= 400 && error.status < 500) {
        end("signedOut.expired");
        throw error;
      }
      // Auth unreachable: try again while the access token lasts, then give up.
      if (secondsLeft(current) > RETRY_AFTER_MS / 1000) {
        clearTimeout(timer);
        timer = setTimeout(() => refresh(current.refresh_token).catch(() => {}), RETRY_AFTER_MS);
      } else {
        end("signedOut.expired");
      }
      throw error;
    }
  };
  return navigator.locks ? navigator.locks.request(LOCK_NAME, run) : run();
}

/** The current access token, renewed first when it has expired. */
export async function accessToken() {
  const session = stored();
  if (!session) throw new AuthRefused(401, "no_session", "signed out");
  if (secondsLeft(session) > 5) return session.access_token;
  return (await refresh(session.refresh_token)).access_token;
}

function end(reason) {
  clearTimeout(timer);
  localStorage.removeItem(STORAGE_KEY);
  onEnded(reason);
}

/** Sign out here (Auth ends this session; its refresh token stops working). */
export async function signOut(reason = "signedOut.byYou") {
  const session = stored();
  end(reason);
  if (session) await auth("logout?scope=local", {}, session.access_token).catch(() => {});
}

/** The session ended for a reason the server gave (the API answered 401): forget it here. */
export function ended(reason) {
  end(reason);
}

export function current() {
  return stored();
}

/** Start watching: `changed(session)` after every renewal, `endedWith(reasonKey)` once it ends. */
export function watch(changed, endedWith) {
  onChanged = changed;
  onEnded = endedWith;
  const session = stored();
  if (session) schedule(session);
  // Other tabs: a renewal there, or a sign-out.
  window.addEventListener("storage", (event) => {
    if (event.key !== STORAGE_KEY) return;
    const next = stored();
    if (next) {
      schedule(next);
      onChanged(next);
    } else {
      clearTimeout(timer);
      onEnded("signedOut.otherTab");
    }
  });
}
