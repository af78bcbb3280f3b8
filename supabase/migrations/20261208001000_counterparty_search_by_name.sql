-- The law's counterparty search (取引先) read, in fax_index_counterparty, the posting lists of the
-- grams that most counterparties share (商事, the digits): about 10 ms a scan at 1,000,000 faxes,
-- twice a search (the page and its count), and a frequent counterparty's every match was fetched and
-- sorted for its page. An office deals with a few hundred or thousand counterparties, written the
-- same way on fax after fax: the search now finds the folded names that match among the distinct
-- ones (fax_counterparties, kept by a trigger of fax_index) and reads their faxes through a b-tree
-- by name in received order: a page of one name is an index range, its count an index-only scan.

create table document_jobs_internal.fax_counterparties (
    folded text primary key
);
alter table document_jobs_internal.fax_counterparties enable row level security;
comment on table document_jobs_internal.fax_counterparties is
    'Every folded counterparty (fax_index.counterparty_folded) a fax has or had, kept by the triggers fax_index_note_counterparties_*, so that the counterparty search matches its term against the distinct names and then reads fax_index_by_counterparty. A name no fax has any more stays: it matches no fax.';

insert into document_jobs_internal.fax_counterparties (folded)
select distinct i.counterparty_folded from public.fax_index i where i.counterparty_folded is not null
on conflict do nothing;

create function document_jobs_internal.note_counterparties() returns trigger
    language plpgsql security definer set search_path = ''
as $$
begin
    insert into document_jobs_internal.fax_counterparties (folded)
    select distinct n.counterparty_folded from new_rows n where n.counterparty_folded is not null
    on conflict do nothing;
    return null;
end;
$$;
revoke all on function document_jobs_internal.note_counterparties() from public;
comment on function document_jobs_internal.note_counterparties() is
    'Triggers fax_index_note_counterparties_insert and _update: every folded counterparty written to fax_index is kept in fax_counterparties (once per statement: a load of many faxes pays one insert of its distinct names). Security definer: fax_index is written through set_fax_index, whose caller has no privilege on the helpers'' tables.';

-- A transition table cannot go with a column list (UPDATE OF counterparty): one trigger per event.
create trigger fax_index_note_counterparties_insert after insert on public.fax_index
    referencing new table as new_rows for each statement execute function document_jobs_internal.note_counterparties();
create trigger fax_index_note_counterparties_update after update on public.fax_index
    referencing new table as new_rows for each statement execute function document_jobs_internal.note_counterparties();

create index fax_index_by_counterparty on public.fax_index (counterparty_folded, received desc, fax_received_email_id desc);
drop index public.fax_index_counterparty;
drop function document_jobs_internal.term_grams(text);
drop function document_jobs_internal.text_grams(text);

-- The names that match, written in as values (a single name as an equality: the planner then reads
-- fax_index_by_counterparty in received order; several, as a list whose share it estimates from the
-- column's statistics). STABLE now: it reads fax_counterparties. PL/pgSQL, so that the term is folded
-- once and not for each name compared (kana_fold's NFKC per row cost 8 ms over 1,000 names).
create or replace function document_jobs_internal.faxes_index_sql(p_filter jsonb) returns text
    language plpgsql stable set search_path = ''
as $$
declare
    v_pattern text;
    v_names text[];
    v_counterparty text;
begin
    if p_filter ? 'counterparty' then
        v_pattern := document_jobs_internal.like_pattern(document_jobs_internal.kana_fold(p_filter ->> 'counterparty'));
        v_names := array(select c.folded from document_jobs_internal.fax_counterparties c
                          where c.folded like v_pattern order by c.folded);
        v_counterparty := case when cardinality(v_names) = 1 then format('i.counterparty_folded = %L', v_names[1])
                               else format('i.counterparty_folded = any (%L::text[])', v_names) end;
    end if;
    return concat_ws(' and ', 'true',
        case when p_filter ? 'date_from' then format('i.transaction_date >= %L::date', p_filter ->> 'date_from') end,
        case when p_filter ? 'date_to' then format('i.transaction_date <= %L::date', p_filter ->> 'date_to') end,
        case when p_filter ? 'amount_min' then format('i.amount >= %s', (p_filter ->> 'amount_min')::bigint) end,
        case when p_filter ? 'amount_max' then format('i.amount <= %s', (p_filter ->> 'amount_max')::bigint) end,
        case when p_filter ? 'doc_type' then format('i.doc_type = %L', p_filter ->> 'doc_type') end,
        v_counterparty);
end;
$$;
comment on function document_jobs_internal.faxes_index_sql(jsonb) is
    'A normalized index filter''s conditions as SQL over a fax_index row "i" (the values written in, for the planner): the date and amount ranges, the type, and the counterparty as the folded names of fax_counterparties that contain the folded term (fax_index_by_counterparty); "true" when there are none.';
