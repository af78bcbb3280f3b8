"""What the Vercel functions in api/ and the operator CLI share; the functions stay thin adapters.

Floors, each importing only from those above it:
  shared vocabulary  settings, log, failures, budget, storable, limits (the database's bounds),
                     errors (Refusal, DatabaseError), http_shell (the functions' HTTP shell)
  supabase/          keys, client, rpc, storage: every call to the Supabase project
  worker/            api/internal/document_jobs.py: endpoint > loop > fetch_email > queue, resend
  webhook/           api/webhooks/resend.py: endpoint
  screen/            api/admin.py: endpoint, page, auth (the admin screen's server)
  admin/             document-jobs-admin (python -m lib.admin), the operator CLI (never deployed)
"""
