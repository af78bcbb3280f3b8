-- The law's search by type, amount range and transaction dates together counted its matches (up to
-- 10,001) through fax_index_amount: at 1,000,000 faxes an amount range of a fifth of them is 150,000
-- rows read from the heap to keep the 5,000 of the type and week (about 90 ms, 137 ms with the pages
-- out of the cache). A type with a range of dates is an index range here, the amount checked in the
-- index: the count is an index-only scan of the type's faxes of those dates (about 4 ms).
create index fax_index_type_dates on public.fax_index (doc_type, transaction_date) include (amount);
