-- The record of a received fax cannot change.
--
-- What the office received is a legal record (Japan's Electronic Bookkeeping Act keeps received
-- transaction documents for seven years and asks that a correction or deletion be impossible or
-- recorded). Its rows are the e-mail (fax_received_emails) and its stored attachments
-- (fax_received_email_attachments: key, size, SHA-256, content type, received time). Until now
-- service_role could update or delete them, a delete of an e-mail cascaded to its attachments
-- and jobs, and the table's owner could change anything: no trace was left of any of it.
--
-- Now, for every table of record_tables() (the two above and fax_deletions, the record of approved
-- deletions, which is itself a record):
-- - privileges: service_role may read and insert, nothing else; anon and authenticated nothing;
-- - triggers, which bind the owner (postgres: migrations, the SQL editor, every security definer
--   function) too: a BEFORE UPDATE row trigger and a statement trigger refuse every UPDATE (the
--   statement one also an UPDATE that matches no row, and INSERT ... ON CONFLICT DO UPDATE), a
--   BEFORE DELETE row trigger refuses a delete unless a row of fax_deletions names the row's
--   e-mail (a cascade from the e-mail meets the same trigger on each attachment), and a BEFORE
--   TRUNCATE trigger refuses TRUNCATE, which fires no row trigger;
-- - ENABLE ALWAYS: a trigger in the default mode does not fire in a session whose
--   session_replication_role is replica, and on hosted Supabase postgres may set it (supautils'
--   privileged_role_allowed_configs, github.com/supabase/supautils).
--
-- What it cannot stop: the table's owner can still disable or drop a trigger (ALTER TABLE ...
-- DISABLE TRIGGER) or the table itself; no setting of PostgreSQL takes that from the owner. The
-- health check (next migration) reports a guard that is missing, disabled or altered, and a
-- privilege granted back, every minute, as the outage records_unguarded; docs/OPERATIONS.md says so.
--
-- Deletion: item 5 of the law's work (retention) adds the one audited way, an admin's action
-- after the keep-until date that writes a row of fax_deletions and then deletes. This migration
-- only makes the table that way must write and the guard that reads it: nothing writes
-- fax_deletions yet, so nothing can delete a record.
--
-- Tests: a test cluster empties these tables between tests through one function that only the
-- cluster's superuser owns (document_jobs_test_cluster.reset_tables, devstack/bootstrap.sql); the
-- TRUNCATE guard lets it through only where that schema exists and is owned by a superuser, and
-- only for a superuser who set document_jobs_test_cluster.resetting for the statement. On hosted
-- Supabase the superuser is the platform's and postgres is not one (it cannot create an object a
-- superuser owns), so no project has that schema.

create table public.fax_deletions (
    id bigint generated always as identity primary key,
    fax_received_email_id uuid not null constraint fax_deletions_one_per_email unique,
    actor_id uuid not null,
    actor_email text,
    reason text not null constraint fax_deletions_reason check (length(btrim(reason)) between 1 and 500),
    what jsonb not null constraint fax_deletions_what check (jsonb_typeof(what) = 'object'),
    approved_at timestamptz not null default now()
);
comment on table public.fax_deletions is
    'THE RECORD of approved deletions: one row per received fax (e-mail) an admin deleted after its keep-until date, with who, why, when and what went (what: the rows'' ids, the objects'' keys and SHA-256, the index values). The guard of the record tables lets a row of fax_received_emails or fax_received_email_attachments be deleted only when a row here names its e-mail; this table itself is never updated, deleted or truncated. No function writes it yet: the retention work adds the admin''s action, so that until then nothing deletes a record.';
comment on column public.fax_deletions.fax_received_email_id is
    'The e-mail (fax_received_emails.id) whose rows may be deleted. No foreign key: the row outlives the e-mail it names.';
comment on column public.fax_deletions.what is
    'What was to go, as the action found it before deleting: the e-mail''s and the attachments'' rows, the objects'' keys and SHA-256, the index values.';
alter table public.fax_deletions enable row level security;
revoke all on table public.fax_deletions from anon, authenticated, service_role;
grant select on table public.fax_deletions to service_role;

revoke all on sequence public.fax_deletions_id_seq from public, anon, authenticated, service_role;
comment on sequence public.fax_deletions_id_seq is
    'The identity of fax_deletions.id: the order in which deletions were approved.';

create function document_jobs_internal.record_tables()
returns table (record_table text, email_column text)
language sql
immutable
set search_path = ''
as $$
    values ('public.fax_received_emails', 'id'),
           ('public.fax_received_email_attachments', 'fax_received_email_id'),
           ('public.fax_deletions', null)
$$;
revoke all on function document_jobs_internal.record_tables() from public;
comment on function document_jobs_internal.record_tables() is
    'The tables that are THE RECORD of received faxes (qualified names: a health check must still answer when one is gone): their rows are inserted once and never updated, deleted or truncated (record_guards). email_column names the column that says which e-mail a row belongs to, for a deletion approved in fax_deletions; null: the table''s rows are never deleted (fax_deletions itself). Everything else (jobs, attempts, views, handling state) is not the record and stays changeable.';

create function document_jobs_internal.refuse_record_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    -- A test cluster's reset: see document_jobs_test_cluster.reset_tables (devstack/bootstrap.sql).
    -- Inline, not a helper's call: the trigger runs as whoever changes the table, who may have no
    -- privilege on document_jobs_internal.
    if tg_op = 'TRUNCATE'
       and current_setting('document_jobs_test_cluster.resetting', true) = 'on'
       and exists (select 1 from pg_catalog.pg_roles r where r.rolname = current_user and r.rolsuper)
       and exists (select 1
                     from pg_catalog.pg_namespace n
                     join pg_catalog.pg_roles r on r.oid = n.nspowner
                    where n.nspname = 'document_jobs_test_cluster' and r.rolsuper) then
        return null;
    end if;
    raise exception using errcode = 'restrict_violation',
        message = format('%I.%I is the record of received faxes: its rows are never %s', tg_table_schema,
                         tg_table_name, case tg_op when 'UPDATE' then 'updated' else 'truncated' end),
        hint = 'A record is only ever inserted; a deletion after the keep-until date goes through fax_deletions.';
end;
$$;
revoke all on function document_jobs_internal.refuse_record_change() from public;
comment on function document_jobs_internal.refuse_record_change() is
    'Trigger of every record table (record_guards): refuses any UPDATE (row and statement triggers) and any TRUNCATE, whoever asks, the table''s owner and security definer functions included (restrict_violation). The one exception is a test cluster''s reset (document_jobs_test_cluster.reset_tables, which only a test cluster has: its schema owned by a superuser, which a hosted project''s roles cannot make), run by a superuser.';

create function document_jobs_internal.refuse_record_delete()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
    v_email uuid;
begin
    if tg_nargs = 1 then
        v_email := (pg_catalog.to_jsonb(old) ->> tg_argv[0])::uuid;
        if exists (select 1 from public.fax_deletions d where d.fax_received_email_id = v_email) then
            return old;
        end if;
    end if;
    raise exception using errcode = 'restrict_violation',
        message = format('%I.%I is the record of received faxes: its rows are never deleted%s', tg_table_schema,
                         tg_table_name, case when tg_nargs = 1
                                             then format(' (e-mail %s has no approved deletion)', v_email) end),
        hint = 'A deletion after the keep-until date is an admin''s action that is recorded in fax_deletions first.';
end;
$$;
revoke all on function document_jobs_internal.refuse_record_delete() from public;
comment on function document_jobs_internal.refuse_record_delete() is
    'Trigger of every record table (record_guards), before each deleted row: refuses the delete (restrict_violation) unless the table names an e-mail column (its one argument, record_tables().email_column) and a row of fax_deletions names the row''s e-mail. Row by row, so that a cascade from an e-mail to its attachments meets it too. Without an argument (fax_deletions) nothing is ever deleted.';

create function document_jobs_internal.record_guards()
returns table (record_table text, trigger_name text, definition text)
language sql
immutable
set search_path = ''
as $$
    select t.record_table, g.name,
           format('CREATE TRIGGER %s %s ON %s FOR EACH %s EXECUTE FUNCTION %s(%s)', g.name, g.event, t.record_table,
                  g.level, g.function,
                  case when g.function = 'document_jobs_internal.refuse_record_delete' and t.email_column is not null
                       then pg_catalog.quote_literal(t.email_column) else '' end)
      from document_jobs_internal.record_tables() t
     cross join (values ('record_not_updated', 'BEFORE UPDATE', 'ROW', 'document_jobs_internal.refuse_record_change'),
                        ('record_not_updated_by_statement', 'BEFORE UPDATE', 'STATEMENT',
                         'document_jobs_internal.refuse_record_change'),
                        ('record_deleted_only_as_approved', 'BEFORE DELETE', 'ROW',
                         'document_jobs_internal.refuse_record_delete'),
                        ('record_not_truncated', 'BEFORE TRUNCATE', 'STATEMENT',
                         'document_jobs_internal.refuse_record_change')) g(name, event, level, function)
$$;
revoke all on function document_jobs_internal.record_guards() from public;
comment on function document_jobs_internal.record_guards() is
    'The guard triggers every record table must have, each with its definition exactly as pg_get_triggerdef shows it: what guard_record_tables creates and what record_guard_problems holds the tables to. Each is ENABLE ALWAYS (it fires in a session whose session_replication_role is replica too).';

create function document_jobs_internal.guard_record_tables()
returns int
language plpgsql
set search_path = ''
as $$
declare
    v_table regclass;
    v_name name;
    v_column name;
    v_grantee name;
    v_state text;
    v_put_back int := 0;
begin
    /* DDL on tables named at run time: dynamic by nature, and volatile, which plpgsql_check cannot
     * see through EXECUTE.
     * @plpgsql_check_options: performance_warnings = false
     */
    for v_table, v_name, v_state in
        select pg_catalog.to_regclass(g.record_table), g.trigger_name,
               case when tr.oid is null then 'missing'
                    when pg_catalog.pg_get_triggerdef(tr.oid) <> g.definition then 'altered'
                    when tr.tgenabled <> 'A' then 'not_enabled' end
          from document_jobs_internal.record_guards() g
          left join pg_catalog.pg_trigger tr
            on tr.tgrelid = pg_catalog.to_regclass(g.record_table) and tr.tgname = g.trigger_name
         where pg_catalog.to_regclass(g.record_table) is not null
    loop
        continue when v_state is null;
        if v_state = 'altered' then
            execute format('drop trigger %I on %s', v_name, v_table);
        end if;
        if v_state in ('missing', 'altered') then
            -- record_guards' own text, made of its constants: the one definition health compares with.
            execute format('%s', (select g.definition from document_jobs_internal.record_guards() g
                                   where g.record_table = v_table::text and g.trigger_name = v_name));
        end if;
        execute format('alter table %s enable always trigger %I', v_table, v_name);
        v_put_back := v_put_back + 1;
    end loop;
    -- Every role but the owner loses what could change a row (or hang a trigger or a foreign key
    -- on the table), whatever was granted: the clients' roles, and any other the owner granted to.
    for v_table, v_grantee in
        select pg_catalog.to_regclass(t.record_table), r.grantee
          from document_jobs_internal.record_tables() t
         cross join (values ('public'::name), ('anon'), ('authenticated'), ('service_role')) r(grantee)
         where pg_catalog.to_regclass(t.record_table) is not null
        union
        select c.oid::regclass, case when a.grantee = 0 then 'public'::name else pg_catalog.pg_get_userbyid(a.grantee) end
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.record_table)
         cross join lateral pg_catalog.aclexplode(c.relacl) a
         where a.grantee <> c.relowner
    loop
        execute format('revoke update, delete, truncate, references, trigger on table %s from %I', v_table, v_grantee);
    end loop;
    for v_table, v_column, v_grantee in
        select c.oid::regclass, at.attname,
               case when a.grantee = 0 then 'public'::name else pg_catalog.pg_get_userbyid(a.grantee) end
          from document_jobs_internal.record_tables() t
          join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.record_table)
          join pg_catalog.pg_attribute at on at.attrelid = c.oid
         cross join lateral pg_catalog.aclexplode(at.attacl) a
         where a.privilege_type in ('UPDATE', 'REFERENCES')
    loop
        execute format('revoke update (%I), references (%I) on table %s from %I', v_column, v_column, v_table,
                       v_grantee);
    end loop;
    return v_put_back;
end;
$$;
revoke all on function document_jobs_internal.guard_record_tables() from public;
comment on function document_jobs_internal.guard_record_tables() is
    'Puts the guards in place on every record table (record_tables), idempotently: creates each trigger of record_guards that is missing, re-creates one whose definition differs, makes each ENABLE ALWAYS, and revokes UPDATE, DELETE, TRUNCATE, REFERENCES and TRIGGER from every role but the owner; answers how many triggers it put back. The outage records_unguarded''s advice, and how a table that becomes a record is guarded (added to record_tables, then this called in the same migration).';

-- service_role keeps what the product uses: it reads both tables (the CLI, through PostgREST) and
-- the tests insert rows as it; the product itself writes only through its functions.
select document_jobs_internal.guard_record_tables();

comment on table public.fax_received_emails is
    'THE RECORD of received faxes, one row per inbound e-mail; data is the webhook''s verbatim "data" object (or the listing''s item, found_by reconciliation). Written once by record_email''s INSERT and never updated or deleted (record_guards; a deletion only as approved in fax_deletions). What changes about a fax (its jobs, its views, its handling) lives in tables of its own.';
comment on table public.fax_received_email_attachments is
    'THE RECORD of each attachment stored in Storage (the private bucket fax-attachments): its key, size, SHA-256, content type and name, written by the worker through record_document_attachment_v2 and never updated or deleted (record_guards; a deletion only as approved in fax_deletions). Unique per e-mail and provider attachment id: recording it again with the same values changes nothing, with other values is refused.';
comment on column public.fax_received_email_attachments.updated_at is
    'Always created_at: the row is never updated (the reads that show it as stored_at keep the name).';
