-- Unschedule by name first: applying the migrations again leaves exactly one job of each.
-- (cron.unschedule(name) raises when the job does not exist, hence the select.)
select cron.unschedule(j.jobid) from cron.job j where j.jobname in ('document-jobs', 'document-jobs-purge');

-- The safety net for lost follow-up calls: every minute, call the worker when work is claimable.
select cron.schedule('document-jobs', '* * * * *', 'select public.invoke_document_jobs()');

-- Retention: completed jobs older than 30 days, daily.
select cron.schedule('document-jobs-purge', '17 3 * * *', 'select public.purge_document_jobs(interval ''30 days'')');
