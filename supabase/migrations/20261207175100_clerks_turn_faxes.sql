-- A clerk turns a fax for everyone, as an admin does: the clerks are the ones who read the faxes
-- that arrive sideways or upside down (the issue's "remembered per fax"), and a turn is no more than
-- a way of showing it: audited, never a change of the original. A viewer still turns only their view.
create or replace function public.admin_set_fax_rotation(p_actor_id uuid, p_actor_email text, p_fax_id uuid, p_rotation integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
    v_before int;
begin
    perform document_jobs_internal.require(p_actor_id is not null, 'p_actor_id must not be null');
    perform document_jobs_internal.acting_operator(p_actor_id, array['admin', 'clerk']);
    perform document_jobs_internal.require(p_fax_id is not null, 'p_fax_id must not be null');
    perform document_jobs_internal.require(p_rotation in (0, 90, 180, 270), 'p_rotation must be 0, 90, 180 or 270');
    perform 1 from public.fax_received_emails e where e.id = p_fax_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'no such fax';
    end if;
    select r.rotation into v_before from public.fax_view_rotations r where r.fax_received_email_id = p_fax_id
       for update;
    if coalesce(v_before, 0) = p_rotation then
        return jsonb_build_object('changed', false, 'rotation', p_rotation);
    end if;
    insert into public.fax_view_rotations (fax_received_email_id, rotation, set_by)
    values (p_fax_id, p_rotation, p_actor_id)
    on conflict (fax_received_email_id) do update set rotation = excluded.rotation, set_by = excluded.set_by,
                                                      set_at = now();
    insert into public.document_jobs_audit (actor_id, actor_email, action, filter, job_count)
    values (p_actor_id, p_actor_email, 'rotate',
            jsonb_build_object('fax_received_email_id', p_fax_id, 'from', coalesce(v_before, 0), 'to', p_rotation), 0);
    return jsonb_build_object('changed', true, 'rotation', p_rotation);
end;
$$;
comment on function public.admin_set_fax_rotation(uuid, text, uuid, integer) is
    'Remembers the rotation a fax is shown at (0, 90, 180 or 270 degrees clockwise) and audits it (action rotate, the rotation before and after); the actor must be an admin or a clerk of Supabase Auth now (acting_operator). {"changed", "rotation"}; P0002 for no such fax.';
