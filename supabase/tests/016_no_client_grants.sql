-- No object of the project grants anything to the clients' roles: anon and authenticated (and
-- PUBLIC, which they are members of) hold no privilege on any table, view, materialized view,
-- sequence, foreign table or column, and cannot execute any function, of public and
-- document_jobs_internal. Supabase's default privileges give them ALL on whatever a migration
-- creates (tables, sequences, functions), so every new object must be revoked; this file finds
-- the one that was not, whatever its kind.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = public, extensions;
select plan(5);

-- Every (object, grantee, privilege) that a client role holds, directly or through PUBLIC; an
-- object without an ACL has its kind's defaults (PUBLIC may execute a function).
create function t.client_grants() returns setof text language sql as $$
    select format('%s %s.%s: %s to %s', kind, n.nspname, o.name, a.privilege_type,
                  case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end)
      from (select c.relnamespace, c.relname::text, c.relowner, c.relacl,
                   case c.relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view'
                                  when 'f' then 'foreign table' else 'table' end,
                   case c.relkind when 'S' then 's' else 'r' end::"char"
              from pg_class c where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
            union all
            select c.relnamespace, c.relname || '.' || at.attname, c.relowner, at.attacl, 'column', 'c'
              from pg_class c join pg_attribute at on at.attrelid = c.oid
             where at.attacl is not null and not at.attisdropped
            union all
            select p.pronamespace, p.oid::regprocedure::text, p.proowner, p.proacl, 'function', 'f'
              from pg_proc p) o(namespace, name, owner, acl, kind, acl_kind)
      join pg_namespace n on n.oid = o.namespace
     cross join lateral aclexplode(coalesce(o.acl, case when o.acl_kind = 'c' then null
                                                        else acldefault(o.acl_kind, o.owner) end)) a
     where n.nspname in ('public', 'document_jobs_internal')
       and (a.grantee = 0 or a.grantee in ('anon'::regrole, 'authenticated'::regrole))
     order by 1 $$;

select is(array(select t.client_grants()), array[]::text[],
          'anon and authenticated hold nothing on any table, view, sequence, column or function');

select ok((select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname in ('public', 'document_jobs_internal') and c.relkind = 'S') > 0
      and (select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname in ('public', 'document_jobs_internal')) > 0,
          'there are sequences and functions to check');

-- The check finds what it should: a new table, its sequence and a function as a migration makes
-- them (Supabase's default privileges apply), and one column granted.
create table public.t_grants_probe (id bigint generated always as identity, note text);
create function public.t_grants_probe_f() returns int language sql as 'select 1';
select ok(array(select t.client_grants()) @> array[
              'table public.t_grants_probe: SELECT to anon', 'sequence public.t_grants_probe_id_seq: USAGE to anon',
              'function public.t_grants_probe_f(): EXECUTE to authenticated'],
          'a new table, its sequence and a function are found with what the defaults gave');
revoke all on table public.t_grants_probe from public, anon, authenticated;
revoke all on sequence public.t_grants_probe_id_seq from public, anon, authenticated;
revoke all on function public.t_grants_probe_f() from public, anon, authenticated;
grant select (note) on public.t_grants_probe to authenticated;
select is(array(select t.client_grants()), array['column public.t_grants_probe.note: SELECT to authenticated'],
          'a column''s grant is found');
revoke select (note) on public.t_grants_probe from authenticated;
select is(array(select t.client_grants()), array[]::text[], 'revoked, nothing is left');

select * from finish();
rollback;
