-- The export of the stored originals (document-jobs-admin export): the tax officer's download
-- request (電子帳簿保存法's 「ダウンロードの求め」) and the office's own copy, run on a schedule
-- with --since-last. One read of its own, for service_role only: the record's rows with what the
-- export names and lists them by (the fax's index, its received time in the office's time zone,
-- its sender), a page at a time by a cursor over (created_at, id) of the attachments' rows and
-- the raw messages' (the e-mail itself, the .eml, where one is stored).
--
-- Each call reads at most p_scan rows of the record in that order and answers those of them the
-- filter keeps, with the cursor of the last row read (not of the last kept): a narrow date range
-- over many faxes is many short calls, never one long one, and the whole export reads the record
-- once. The window's end is the database's clock less five minutes unless given (the first call
-- answers it and the next calls pass it on): created_at is the start of the transaction that
-- recorded the row, so a row committed after the read with an earlier created_at is one whose
-- recording took longer than that; the next incremental copy, which starts where this window
-- ends, finds it.

create function public.export_documents(
    p_from date default null,
    p_to date default null,
    p_stored_from timestamptz default null,
    p_stored_before timestamptz default null,
    p_after_at timestamptz default null,
    p_after_id uuid default null,
    p_scan int default 500
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_zone text := document_jobs_internal.office_time_zone();
    v_before timestamptz := coalesce(p_stored_before, statement_timestamp() - interval '5 minutes');
    v_rows jsonb;
    v_read int;
    v_last_at timestamptz;
    v_last_id uuid;
    v_total int;
begin
    perform document_jobs_internal.require(p_scan between 1 and 1000, 'p_scan must be between 1 and 1000');
    perform document_jobs_internal.require((p_after_at is null) = (p_after_id is null),
                                           'p_after_at and p_after_id go together (the cursor)');
    perform document_jobs_internal.require(p_from is null or p_to is null or p_from <= p_to,
                                           'p_from must be on or before p_to');
    with scanned as (
        select * from (
            (select a.id, a.fax_received_email_id, 'attachment' as kind, a.provider_attachment_id, a.version,
                    a.filename, a.content_type, a.size_bytes, a.sha256, a.bucket, a.storage_path, a.created_at
               from public.fax_received_email_attachments a
              where a.created_at < v_before
                and (p_stored_from is null or a.created_at >= p_stored_from)
                and (p_after_at is null or a.created_at >= p_after_at)
                and (p_after_at is null or (a.created_at, a.id) > (p_after_at, p_after_id))
              order by a.created_at, a.id
              limit p_scan)
            union all
            -- The e-mail itself (.eml), where one is stored: the evidence of when and from whom.
            (select r.id, r.fax_received_email_id, 'raw_message', null, r.version, null, 'message/rfc822',
                    r.size_bytes, r.sha256, r.bucket, r.storage_path, r.created_at
               from public.fax_received_email_raw_messages r
              where r.unavailable is null
                and r.created_at < v_before
                and (p_stored_from is null or r.created_at >= p_stored_from)
                and (p_after_at is null or r.created_at >= p_after_at)
                and (p_after_at is null or (r.created_at, r.id) > (p_after_at, p_after_id))
              order by r.created_at, r.id
              limit p_scan)
        ) u
        order by u.created_at, u.id
        limit p_scan
    ),
    described as (
        select s.*,
               coalesce(e.received_at, e.created_at) as received,
               e.from_address,
               e.subject,
               i.transaction_date,
               i.amount,
               i.counterparty,
               i.doc_type,
               coalesce(i.transaction_date, (coalesce(e.received_at, e.created_at) at time zone v_zone)::date)
                   as filed_on,
               (coalesce(e.received_at, e.created_at) at time zone v_zone)
               - (coalesce(e.received_at, e.created_at) at time zone 'UTC') as utc_offset,
               -- Which of the fax's originals this is, by the order they were recorded (the rows are
               -- never changed, so the number a document is exported under stays its own); a raw
               -- message, which of its versions.
               case when s.kind = 'raw_message' then s.version
                    else (select count(*) from public.fax_received_email_attachments b
                           where b.fax_received_email_id = s.fax_received_email_id
                             and (b.created_at, b.id) <= (s.created_at, s.id)) end as nth,
               case when s.kind = 'raw_message'
                    then (select count(*) from public.fax_received_email_raw_messages b
                           where b.fax_received_email_id = s.fax_received_email_id and b.unavailable is null)
                    else (select count(*) from public.fax_received_email_attachments b
                           where b.fax_received_email_id = s.fax_received_email_id) end as of_fax
          from scanned s
          join public.fax_received_emails e on e.id = s.fax_received_email_id
          left join public.fax_index i on i.fax_received_email_id = s.fax_received_email_id
    )
    select coalesce(jsonb_agg(jsonb_build_object(
               'id', d.id,
               'kind', d.kind,
               'fax_received_email_id', d.fax_received_email_id,
               'provider_attachment_id', d.provider_attachment_id,
               'version', d.version,
               'filename', d.filename,
               'content_type', d.content_type,
               'size_bytes', d.size_bytes,
               'sha256', d.sha256,
               'bucket', d.bucket,
               'storage_path', d.storage_path,
               'stored_at', d.created_at,
               'received', to_char(d.received at time zone v_zone, 'YYYY-MM-DD"T"HH24:MI:SS')
                           || case when d.utc_offset < interval '0' then '-' || to_char(-d.utc_offset, 'HH24:MI')
                                   else '+' || to_char(d.utc_offset, 'HH24:MI') end,
               'sender', d.from_address,
               'subject', d.subject,
               'transaction_date', d.transaction_date,
               'amount', d.amount,
               'counterparty', d.counterparty,
               'doc_type', d.doc_type,
               'filed_on', d.filed_on,
               'dated_by', case when d.transaction_date is null then 'received' else 'transaction' end,
               'nth', d.nth,
               'of_fax', d.of_fax
           ) order by d.created_at, d.id) filter (where (p_from is null or d.filed_on >= p_from)
                                                    and (p_to is null or d.filed_on <= p_to)), '[]'::jsonb),
           count(*)::int,
           (array_agg(d.created_at order by d.created_at desc, d.id desc))[1],
           (array_agg(d.id order by d.created_at desc, d.id desc))[1]
      into v_rows, v_read, v_last_at, v_last_id
      from described d;
    if p_after_at is null then  -- the first call: how many the export holds, for its progress
        select count(*)::int into v_total
          from (select b.fax_received_email_id, b.created_at from public.fax_received_email_attachments b
                union all
                select r.fax_received_email_id, r.created_at from public.fax_received_email_raw_messages r
                 where r.unavailable is null) a
          join public.fax_received_emails e on e.id = a.fax_received_email_id
          left join public.fax_index i on i.fax_received_email_id = a.fax_received_email_id
         where a.created_at < v_before
           and (p_stored_from is null or a.created_at >= p_stored_from)
           and (p_from is null or coalesce(i.transaction_date,
                                           (coalesce(e.received_at, e.created_at) at time zone v_zone)::date) >= p_from)
           and (p_to is null or coalesce(i.transaction_date,
                                         (coalesce(e.received_at, e.created_at) at time zone v_zone)::date) <= p_to);
    end if;
    return jsonb_build_object(
        'total', v_total,
        'time_zone', v_zone,
        'stored_before', v_before,
        -- The window's end as a folder's name, in the office's time zone (--since-last's folder).
        'stored_before_local', to_char(v_before at time zone v_zone, 'YYYYMMDD-HH24MISS'),
        'rows', v_rows,
        'next', case when v_read = p_scan then jsonb_build_object('at', v_last_at, 'id', v_last_id) end);
end;
$$;
comment on function public.export_documents(date, date, timestamptz, timestamptz, timestamptz, uuid, int) is
    'document-jobs-admin export''s read: the stored originals (fax_received_email_attachments, kind attachment) and raw e-mails (fax_received_email_raw_messages where stored, kind raw_message) recorded in [p_stored_from, p_stored_before) (p_stored_before null: five minutes ago, answered as stored_before), by (created_at, id) after the cursor (p_after_at, p_after_id), at most p_scan rows read per call; those filed on p_from..p_to (取引年月日, or the received date in the office''s time zone when none is entered) are answered with the fax''s index, received time (with its offset in the office''s time zone), sender and subject, and which of its fax''s originals (or raw messages) each is (nth of of_fax). next is the cursor of the last row read, null when the window is read to its end; total (first call only, without a cursor) how many the whole export holds.';
-- The raw messages walked in the same order as the attachments (their created_at index): a page is
-- an index range of each, never a sort of all of them.
create index fax_received_email_raw_messages_created_at
    on public.fax_received_email_raw_messages (created_at, id) where unavailable is null;

revoke all on function public.export_documents(date, date, timestamptz, timestamptz, timestamptz, uuid, int)
    from public, anon, authenticated;
grant execute on function public.export_documents(date, date, timestamptz, timestamptz, timestamptz, uuid, int)
    to service_role;
