-- Supabase's default privileges give anon and authenticated every new sequence of public
-- (supabase/tests/016 finds them): the history's ids are drawn only by set_fax_index, as its owner.
revoke all on sequence public.fax_index_history_id_seq from public, anon, authenticated, service_role;
