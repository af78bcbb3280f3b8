-- Stand-in for pg_net (https://github.com/supabase/pg_net), local stack only.
-- Same public API: net.http_post / net.http_get queue a request in net.http_request_queue and
-- return its id; a worker (here devstack/standins/pg_net.py) sends it only after the calling
-- transaction commits, because it can only see committed rows, and records the answer in
-- net._http_response. Like pg_net, the extension's objects live in schema "net" whatever
-- schema "create extension ... with schema" names.
create schema if not exists net;

create unlogged table net.http_request_queue (
    id bigserial primary key,
    method text not null check (method in ('GET', 'POST', 'DELETE')),
    url text not null,
    headers jsonb not null,
    body bytea,
    timeout_milliseconds int not null
);

create unlogged table net._http_response (
    id bigint,
    status_code int,
    content_type text,
    headers jsonb,
    content text,
    timed_out bool,
    error_msg text,
    created timestamptz not null default now()
);
create index on net._http_response (created);

create function net._urlencode_params(url text, params jsonb)
returns text
language sql
immutable
as $$
    select url || coalesce(
        (select case when strpos(url, '?') > 0 then '&' else '?' end
                || string_agg(key || '=' || value, '&' order by key)
           from jsonb_each_text(params)),
        '')
$$;

create function net._enqueue(method text, url text, headers jsonb, body bytea, timeout_milliseconds int)
returns bigint
language plpgsql
volatile
security definer  -- as pg_net's http_post: callers need no privilege on the queue table
set search_path = ''
as $$
declare
    request_id bigint;
begin
    if timeout_milliseconds is null or timeout_milliseconds <= 0 then
        raise exception 'timeout_milliseconds must be positive';
    end if;
    insert into net.http_request_queue (method, url, headers, body, timeout_milliseconds)
    values (method, url, coalesce(headers, '{}'), body, timeout_milliseconds)
    returning id into request_id;
    -- Delivered only at commit, so the dispatcher wakes exactly when the request becomes visible.
    perform pg_catalog.pg_notify('pg_net_standin', request_id::text);
    return request_id;
end;
$$;

create function net.http_post(
    url text,
    body jsonb default '{}'::jsonb,
    params jsonb default '{}'::jsonb,
    headers jsonb default '{"Content-Type": "application/json"}'::jsonb,
    timeout_milliseconds int default 5000
)
returns bigint
language sql
volatile
as $$
    select net._enqueue('POST', net._urlencode_params(url, params), headers,
                        convert_to(body::text, 'UTF8'), timeout_milliseconds)
$$;

create function net.http_get(
    url text,
    params jsonb default '{}'::jsonb,
    headers jsonb default '{}'::jsonb,
    timeout_milliseconds int default 5000
)
returns bigint
language sql
volatile
as $$
    select net._enqueue('GET', net._urlencode_params(url, params), headers, null, timeout_milliseconds)
$$;
