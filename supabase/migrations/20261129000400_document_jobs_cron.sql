-- Unschedule by name first: applying the migrations again leaves exactly one job.
-- (cron.unschedule(name) raises when the job does not exist, hence the select.)
select cron.unschedule(j.jobid) from cron.job j where j.jobname = 'document-jobs';

-- The safety net for lost follow-up calls: every minute, call the worker when work is claimable.
select cron.schedule('document-jobs', '* * * * *', 'select public.invoke_document_jobs()');

