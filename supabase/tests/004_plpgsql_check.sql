-- `supabase db lint` (make test) fails on plpgsql_check's errors and warnings; this asks for every
-- class it has besides (extra, performance, security, compatibility), so that the notes the linter
-- leaves out, such as a hidden cast or a volatility class too weak for the planner, stay fixed too.
begin;
set local client_min_messages = warning;
\ir helpers.psql
create extension if not exists plpgsql_check with schema extensions;
set local search_path = extensions;
select plan(2);

create temporary view checked_functions as
select p.oid
  from pg_catalog.pg_proc p
 where p.pronamespace in ('public'::regnamespace, 'document_jobs_internal'::regnamespace)
   and p.prolang = (select l.oid from pg_catalog.pg_language l where l.lanname = 'plpgsql')
   and p.prorettype <> 'trigger'::regtype;

select isnt_empty('select oid from checked_functions', 'the project''s PL/pgSQL functions are there to check');

select is_empty(
    $$ select f.oid::regprocedure::text, c.lineno, c.level, c.message, c.detail
         from checked_functions f,
              lateral plpgsql_check_function_tb(f.oid, extra_warnings => true, performance_warnings => true,
                                                security_warnings => true, compatibility_warnings => true) c $$,
    'plpgsql_check finds nothing in any of them, with every warning class on');

select * from finish();
rollback;
