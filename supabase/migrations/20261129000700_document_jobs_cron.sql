-- The two cron jobs. Each is unscheduled by name first, so that applying this again leaves
-- exactly one of each. (cron.unschedule(name) raises when the job does not exist, hence the select.)

-- The safety net for lost follow-up calls: every minute, call the worker when work is claimable.
select cron.unschedule(j.jobid) from cron.job j where j.jobname = 'document-jobs';
select cron.schedule('document-jobs', '* * * * *', 'select public.invoke_document_jobs()');

-- Retention: every night, delete the completed jobs older than the retention setting.
select cron.unschedule(j.jobid) from cron.job j where j.jobname = 'document-jobs-purge';
select cron.schedule('document-jobs-purge', '17 3 * * *', 'select public.purge_document_jobs()');
