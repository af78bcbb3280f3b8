// @ts-check
// The operator's Supabase Auth session, kept by Supabase's own auth client: @supabase/auth-js's
// AuthClient, from the browser build of @supabase/supabase-js (vendor/supabase.js, whose global
// `supabase` the page loads before its modules; pinned in devstack/package-lock.json and copied by
// `make vendor`). It talks to Auth directly with the publishable key, the only key the page has.
//
// What the client does, as its documentation says (tests/screen/test_browser.py watches it under
// the page's policy): the session lives in localStorage, shared by every tab of the page; a token
// is renewed before it expires (the client looks every 30 s and renews one with less than 90 s
// left, and getSession renews one that close before handing it out); a hidden tab stops looking
// until it is shown again; the tabs tell each other of a sign-in, a renewal and a sign-out over a
// BroadcastChannel named after the storage key; and two tabs that renew at the same moment get the
// same new token from Auth (GoTrue's refresh-token reuse interval), so neither ends the session.
// A renewal that Auth refuses once the access token has expired ends the session, in every tab.
// This module only says why a session ended, and turns Auth's refusals into AuthRefused.

const STORAGE_KEY = "document-jobs-admin-session";
const ENDED_KEY = "document-jobs-admin-ended"; // why the session ended, for the other tabs

/** @typedef {import("@supabase/auth-js").Session} Session */
/** @typedef {import("@supabase/auth-js").AuthError} AuthError */

/** @param {string} name the page's <meta name=...> that carries the value */
function setting(name) {
  const meta = document.querySelector(`meta[name="${name}"]`);
  if (!(meta instanceof HTMLMetaElement)) throw new Error(`the page has no <meta name="${name}">`);
  return meta.content;
}

/** @type {Pick<typeof import("@supabase/auth-js"), "AuthClient" | "isAuthApiError"> | undefined} vendor/supabase.js's global */
const supabase = Reflect.get(globalThis, "supabase");
if (!supabase) throw new Error("the page did not load vendor/supabase.js before its modules");

const client = new supabase.AuthClient({
  url: `${setting("document-jobs-supabase-url")}/auth/v1`,
  headers: { apikey: setting("document-jobs-supabase-key") },
  storageKey: STORAGE_KEY,
  autoRefreshToken: true,
  persistSession: true,
  // The e-mailed links (a password recovery, an invitation) return with the session in the URL's
  // fragment: app.js takes it (sessionFromLink), because the fragment is also the page's router.
  detectSessionInUrl: false,
});

/** @type {string | null} the key of the message for a sign-out this tab asked for */
let asked = null;

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

/**
 * Auth's answer as AuthRefused; anything else (Auth unreachable) as it is.
 * @param {AuthError} error
 */
function refusal(error) {
  return supabase?.isAuthApiError(error) ? new AuthRefused(error.status, error.code, error.message) : error;
}

const SIGNED_OUT = () => new AuthRefused(401, "no_session", "signed out");

/**
 * Sign in; the session, or AuthRefused with Auth's own code and message (a wrong password:
 * invalid_credentials, "Invalid login credentials").
 * @param {string} email
 * @param {string} password
 */
export async function signIn(email, password) {
  const { data, error } = await client.signInWithPassword({ email, password });
  if (error) throw refusal(error);
  localStorage.removeItem(ENDED_KEY);
  return data.session;
}

/** @param {string} reason the key of the message that says why */
function ending(reason) {
  asked = reason;
  localStorage.setItem(ENDED_KEY, reason); // before the client's broadcast reaches the other tabs
}

/**
 * Sign out with the client's default scope, "global": Auth ends every session of this operator,
 * on every device, and the local session goes once Auth has agreed. When Auth cannot be reached,
 * this device signs out all the same (scope "local"), as the client's migration note advises.
 */
export async function signOut(reason = "signedOut.byYou") {
  ending(reason);
  const { error } = await client.signOut();
  if (error) await client.signOut({ scope: "local" });
}

/**
 * The session ended for a reason the server gave (the API answered 401): forget it here and in the
 * other tabs.
 * @param {string} reason
 */
export async function ended(reason) {
  ending(reason);
  await client.signOut({ scope: "local" });
}

/** The session, or null; renewed first when it is about to expire. */
export async function current() {
  const { data } = await client.getSession();
  return data.session;
}

/** The current access token (renewed first when it is about to expire), or AuthRefused. */
export async function accessToken() {
  const { data, error } = await client.getSession();
  if (error) throw refusal(error);
  if (!data.session) throw SIGNED_OUT();
  return data.session.access_token;
}

/**
 * A new access token now (the API found the one it was sent expired): the renewed session, or
 * AuthRefused.
 * @returns {Promise<Session>}
 */
export async function refresh() {
  const { data, error } = await client.refreshSession();
  if (error) throw refusal(error);
  if (!data.session) throw SIGNED_OUT();
  return data.session;
}

/** Why a sign-out that another tab (or the client itself) made happened: the message's key. */
function reasonElsewhere() {
  const reason = localStorage.getItem(ENDED_KEY);
  if (reason === null) return "signedOut.expired"; // nobody asked: a renewal Auth refused
  return reason === "signedOut.byYou" ? "signedOut.otherTab" : reason;
}

/**
 * Start watching: `changed(session)` after every sign-in and renewal (in any tab), `endedWith(reasonKey)`
 * once the session ends.
 * @param {(session: Session) => void} changed
 * @param {(reason: string) => void} endedWith
 */
export function watch(changed, endedWith) {
  client.onAuthStateChange((event, session) => {
    if (event === "SIGNED_OUT") {
      const reason = asked ?? reasonElsewhere();
      asked = null;
      endedWith(reason);
    } else if (session && (event === "SIGNED_IN" || event === "TOKEN_REFRESHED")) {
      changed(session);
    }
  });
}

/**
 * Auth e-mails the address a link to set a new password (resetPasswordForEmail: POST /recover),
 * which returns to `redirectTo` (this page) with a session. Auth answers the same whether or not
 * the address has an account; AuthRefused for its limits (over_email_send_rate_limit).
 * @param {string} email
 * @param {string} redirectTo
 */
export async function requestRecovery(email, redirectTo) {
  const { error } = await client.resetPasswordForEmail(email, { redirectTo });
  if (error) throw refusal(error);
}

/**
 * The session an e-mailed link brought (its fragment's access and refresh tokens), kept as a
 * sign-in is (setSession asks Auth for the user first).
 * @param {string} accessToken
 * @param {string} refreshToken
 */
export async function sessionFromLink(accessToken, refreshToken) {
  const { data, error } = await client.setSession({ access_token: accessToken, refresh_token: refreshToken });
  if (error) throw refusal(error);
  localStorage.removeItem(ENDED_KEY);
  return data.session;
}

/**
 * A new password for the signed-in operator (updateUser: PUT /user); Auth ends their other sessions.
 * @param {string} password
 */
export async function setPassword(password) {
  const { error } = await client.updateUser({ password });
  if (error) throw refusal(error);
}
