-- Every function, table, view, sequence and type of the project's two schemas says why it is as it
-- is, in a COMMENT ON that \df+ and supabase/schema.sql show beside its definition. A new object
-- without one fails here (drop and create loses a comment; create or replace keeps it). Objects
-- an extension owns are its own.
begin;
set local client_min_messages = warning;
\ir helpers.psql
set local search_path = extensions;
select plan(4);

create temporary view project_objects as
select 'pg_proc'::regclass as catalog, p.oid, p.oid::regprocedure::text as object
  from pg_catalog.pg_proc p
 where p.pronamespace in ('public'::regnamespace, 'document_jobs_internal'::regnamespace)
union all
select 'pg_class'::regclass, c.oid, format('%s %s', c.relkind, c.oid::regclass)
  from pg_catalog.pg_class c
 where c.relnamespace in ('public'::regnamespace, 'document_jobs_internal'::regnamespace)
   and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
union all
select 'pg_type'::regclass, t.oid, format('type %s', t.oid::regtype)
  from pg_catalog.pg_type t
  left join pg_catalog.pg_class c on c.oid = t.typrelid
 where t.typnamespace in ('public'::regnamespace, 'document_jobs_internal'::regnamespace)
   and (t.typtype in ('d', 'e', 'r', 'm') or c.relkind = 'c');

create temporary view own_objects as
select o.*
  from project_objects o
 where not exists (select 1 from pg_catalog.pg_depend d
                    where d.classid = o.catalog and d.objid = o.oid and d.deptype = 'e');

select cmp_ok((select count(*) from own_objects where catalog = 'pg_proc'::regclass), '>=', 90::bigint,
              'the project''s functions are there to check');
select cmp_ok((select count(*) from own_objects where catalog = 'pg_class'::regclass), '>=', 15::bigint,
              'the project''s tables, views and sequences are there to check');

select is_empty(
    $$ select object from own_objects where nullif(btrim(obj_description(oid, catalog::name)), '') is null
        order by object $$,
    'every function, table, view, sequence and type of public and document_jobs_internal has a comment');

-- The comments say how things are, not how they came to be: a migration's history stays in the migration.
select is_empty(
    $$ select object from own_objects
        where obj_description(oid, catalog::name) ~* '(in the (next|previous) migration|as in 2026\d{10}|20\d{12})'
        order by object $$,
    'no comment points at a migration');

select * from finish();
rollback;
