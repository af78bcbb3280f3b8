"""Stand-in for Supabase Auth (GoTrue) under /auth/v1 of the local gateway. Local stack only: never
deployed, and nothing in lib/ or api/ imports it. It answers what the admin screen and its CLI
send, as the real service answers, from its public reference and source:

- POST /token?grant_type=password {"email", "password"} and ?grant_type=refresh_token
  {"refresh_token"}: a session {"access_token", "token_type": "bearer", "expires_in", "expires_at",
  "refresh_token", "user"}. Refresh tokens rotate: each is used once; used again within 10 s (the
  reuse interval) it answers the session its first use made, later "refresh_token_already_used"
  and the session is ended (reuse detection). A wrong password: 400 invalid_credentials
  "Invalid login credentials" (supabase.com/docs/guides/auth/debugging/error-codes).
- Access tokens (sessions.py) are JWTs signed with an ES256 key (keys.py) (supabase.com/docs/guides/auth/signing-keys),
  whose public part is served at GET /.well-known/jwks.json with its "kid" and "alg"
  (docs/guides/auth/jwts, "Verifying a JWT from Supabase"); the claims of
  docs/guides/auth/jwt-fields: iss ({SUPABASE_URL}/auth/v1), aud authenticated, exp, iat, sub,
  email, phone, role authenticated, aal, amr, session_id, is_anonymous, app_metadata,
  user_metadata.
- GET /user with the access token: the user as stored now (app_metadata as it is, not as the
  token says); 403 session_not_found once the session is gone ("Session from session_id claim in
  JWT does not exist"), 403 bad_jwt for an expired or forged token, 401 no_authorization without.
- GET /user also refuses a banned user (403 user_banned), as GoTrue's requireAuthentication does.
- POST /logout?scope=global|local|others (github.com/supabase/auth internal/api/logout.go): global,
  the default (what supabase-py's and supabase-js's sign_out()/signOut() send), deletes every
  session of the user, local the token's own, others every other one; their refresh tokens go
  with them (access tokens stay valid until they expire, as JWTs do). 204; another scope 400.
- The admin API (docs: reference/javascript/auth-admin-createuser and the admin users pages; users.py),
  for the secret key (legacy: the service_role JWT as Bearer): POST /admin/users {"email",
  "password", "email_confirm", "app_metadata", "user_metadata", "ban_duration"}, GET
  /admin/users?page=&per_page= ({"users", "aud"}, X-Total-Count), PUT /admin/users/{id}
  {"app_metadata", "ban_duration"}, DELETE /admin/users/{id} {"should_soft_delete"}: what the
  operators CLI calls (lib/admin/operators.py), and bans and deletions for tests. PUT merges
  app_metadata key by key, and a key set to null is removed (GoTrue's UpdateAppMetaData).
- Errors in GoTrue's shape: {"code": <status>, "error_code", "msg"}, or {"code": <error_code>,
  "message"} when the request names X-Supabase-Api-Version 2024-01-01 or later
  (github.com/supabase/auth internal/api/errors.go), echoing the version (errors.py).
- CORS (cors.py) as GoTrue's handler (rs/cors, github.com/supabase/auth internal/api/api.go) answers it: a
  preflight (OPTIONS with Access-Control-Request-Method) gets 200 and, when its origin is given,
  its method is one of GET, POST, PUT, DELETE and every header it asks for is allowed, the origin
  echoed, the method, the headers asked for, Access-Control-Allow-Credentials: true and Vary;
  anything else gets the Vary headers alone (so the browser refuses the request). Allowed
  headers: GoTrue's list (Accept, Authorization, Content-Type, X-Client-IP, X-Client-Info,
  X-JWT-AUD, X-Use-Cookie, X-Supabase-Api-Version) and apikey, which Supabase's gateway takes
  in front of it. Other answers to a request with an Origin echo it, with
  Access-Control-Expose-Headers: X-Total-Count, Link, X-Supabase-Api-Version.
- API keys are the gateway's (devstack/standins/gateway.py applies Supabase's key rules to every path,
  the JWKS included, before Auth sees a request; a preflight needs none).

- E-mailed links (mail.py: github.com/supabase/auth internal/api/recover.go, invite.go, verify.go,
  mail.go, user.go): POST /recover (200 {} for anyone), POST /invite (the admin API), GET /verify
  (no API key; 303 to the allowed redirect URL or the Site URL, the session in the fragment), PUT
  /user {"password"}, and GoTrue's e-mail rate limits; the e-mails are captured, never sent.

Left out: sign-ups, magic links, OTP codes typed in, PKCE links, MFA, OAuth, e-mail confirmation
mails, the per-IP rate limits, hooks, and what nothing in the product calls (reading one user,
user_metadata or the e-mail through PUT, the Link header).
Users, sessions and refresh tokens live where GoTrue keeps them: its tables auth.users,
auth.sessions and auth.refresh_tokens in the project's database, with GoTrue's columns (created by
devstack/bootstrap.sql, which cites GoTrue's migrations; state.py), so that the project's own
functions can read who is signed in, as on hosted Supabase.
POST /_control/auth {"access_token_seconds": N, "refresh_reuse_interval_s": N} (on the
gateway) shortens the tokens it issues and the reuse interval, for tests of refreshing; its
"site_url", "uri_allow_list", "max_frequency_s" and "emails_per_hour" set the e-mailed links' and
GET /_control/auth/mail?to= lists the captured e-mails.
"""

from devstack.standins.auth.keys import Keys, new_signing_key
from devstack.standins.auth.sessions import Auth

__all__ = ["Auth", "Keys", "new_signing_key"]
