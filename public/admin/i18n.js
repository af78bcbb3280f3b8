// @ts-check
// English and Japanese. The page follows the browser's languages until the operator picks one
// with the switch (kept in localStorage).
// One message a line: lib/explanations.py reads the labels from here, and the advice in
// lib/failures.py names them by key ("{job.retry}"), so a renamed button is renamed there too.

const STORAGE_KEY = "document-jobs-admin-language";

/** @type {Record<string, Record<string, string>>} a language's code: each key's template */
const MESSAGES = {
  en: {
    title: "Fax inbox admin",
    "nav.overview": "Overview",
    "nav.jobs": "Jobs",
    "nav.audit": "Audit",
    "nav.skip": "Skip to the content",
    "language.label": "Language",
    "session.signOut": "Sign out",
    "session.role.admin": "admin",
    "session.role.viewer": "viewer (read only)",
    "session.role.clerk": "clerk (reads, marks faxes)",
    "signIn.heading": "Sign in",
    "signIn.email": "E-mail",
    "signIn.password": "Password",
    "signIn.submit": "Sign in",
    "signIn.working": "Signing in…",
    "signIn.refused": "Sign-in refused (message from Supabase Auth: {message})",
    "signIn.unreachable": "Supabase Auth could not be reached. Try again.",
    "signedOut.expired": "Your session expired and could not be renewed. Please sign in again.",
    "signedOut.ended": "Your session has ended (signed out elsewhere, or your access was removed). Please sign in again.",
    "signedOut.otherTab": "You signed out in another tab.",
    "signedOut.byYou": "You are signed out.",
    "signedOut.noRole": "This account has no role on the admin screen. Ask an admin to add it.",
    "common.loading": "Loading…",
    "common.none": "none",
    "common.refresh": "Refresh",
    "common.cancel": "Cancel",
    "common.close": "Close",
    "common.confirm": "Confirm",
    "common.older": "Older →",
    "common.newer": "← Newer",
    "common.estimate": "estimate",
    "common.error": "The server refused ({message}).",
    "common.network": "The admin API could not be reached. Try again.",
    "explain.advice": "What to do:",
    "explain.operatorAdvice": "For the system administrator:",
    "explain.unknown": "(no explanation for this code yet)",
    "source.resend": "Message from Resend:",
    "source.storage": "Message from Supabase Storage:",
    "source.database": "Message from the database:",
    "source.download": "Message from the attachment's download:",
    "source.worker": "The worker's message:",
    "source.operator": "The reason given:",
    "state.all": "All",
    "state.queued": "Queued",
    "state.running": "Running",
    "state.completed": "Completed",
    "state.failed": "Failed",
    "overview.states": "Jobs by state",
    "overview.completedEstimate": "Completed is the database's estimate from its table statistics (the table holds most jobs; counting them exactly would read it all).",
    "overview.oldestWaiting": "Oldest waiting job",
    "overview.waitingFor": "waiting for {duration}",
    "overview.nothingWaiting": "Nothing is waiting.",
    "overview.outages": "Open outages (health check)",
    "overview.noOutages": "No open outages.",
    "overview.since": "since {time}",
    "overview.listedUpTo": "Listed everything up to {time}; e-mails received since then that no webhook delivered are unrecoverable from {until}. Run:",
    "overview.lastComplete": "Last complete run: {time}",
    "overview.lastFinding": "The last run stopped early:",
    "overview.unreadableCount": "{count} e-mails that could not be read (the newest shown):",
    "overview.firstListed": "listed {time}",
    "unreadable.field.id": "ID",
    "unreadable.field.created_at": "Time as listed",
    "unreadable.field.from": "From",
    "unreadable.field.to": "To",
    "unreadable.field.subject": "Subject",
    "unreadable.field.message_id": "Message ID",
    "unreadable.field.files": "Files",
    "unreadable.reason.no id": "no ID",
    "unreadable.reason.an id that is not a string": "an ID that is not text",
    "unreadable.reason.an empty id": "an empty ID",
    "unreadable.reason.a created_at that is not a time": "a time that cannot be read",
    "unreadable.reason.a created_at more than a day ahead of the database's clock": "a time more than a day in the future",
    "unreadable.reason.not an object": "not an e-mail entry",
    "overview.perHour": "Jobs completed and failed per hour",
    "overview.latency": "Webhook to attachments stored, per hour",
    "overview.range24h": "24 hours",
    "overview.range7d": "7 days",
    "overview.failures24h": "Failures in the last 24 hours, by error code",
    "overview.failedNow": "Failed jobs now, by error code",
    "overview.noFailures": "No failures.",
    "overview.showJobs": "Show jobs",
    "overview.dataTable": "The figures as a table",
    "chart.completed": "completed",
    "chart.failed": "failed",
    "chart.p50": "p50",
    "chart.p95": "p95",
    "chart.hour": "Hour",
    "column.errorCode": "Error code",
    "column.failed": "Failed (final)",
    "column.retried": "Retried",
    "column.released": "Released",
    "column.other": "Lease lost / cancelled",
    "column.count": "Jobs",
    "column.received": "Received",
    "column.state": "State",
    "column.kind": "Kind",
    "column.attempts": "Attempts",
    "column.error": "Last error",
    "column.from": "From",
    "column.subject": "Subject",
    "column.job": "Job",
    "jobs.filterKind": "Kind",
    "jobs.anyKind": "any",
    "jobs.filterCode": "Error code",
    "jobs.filterFrom": "Received from",
    "jobs.filterTo": "until",
    "jobs.search": "Search",
    "jobs.searchHint": "job id, e-mail id, the provider's e-mail id, sender or subject",
    "jobs.apply": "Apply",
    "jobs.filters": "Filters",
    "jobs.filtersActive": "{count} set",
    "jobs.timeFormat": "Times as YYYY-MM-DD HH:MM, in your zone ({offset}).",
    "jobs.timeInvalid": "Write a time as YYYY-MM-DD HH:MM, for example 2026-12-01 09:00.",
    "jobs.results": "Jobs found",
    "jobs.clear": "Clear",
    "jobs.count": "{count} jobs",
    "jobs.countOne": "1 job",
    "jobs.countCapped": "More than {count} jobs",
    "jobs.none": "No jobs match.",
    "jobs.partial": "Searched the newest jobs back to {time}; terms shorter than three characters cannot use the search index. “Older” searches further.",
    "jobs.autoRefresh": "Auto-refresh every 10 s",
    "jobs.refreshedAt": "updated {time}",
    "jobs.bulkRetry": "Retry every failed job that matches…",
    "jobs.bulkCancel": "Cancel every queued or running job that matches…",
    "jobs.viewerHint": "Viewers can read everything; only admins can act.",
    "jobs.clerkHint": "Clerks mark who is dealing with a fax; only admins retry or cancel jobs.",
    "jobs.bulkDone": "Mark done every fax that matches…",
    "bulk.counting": "Counting the jobs…",
    "bulk.confirmRetry": "Retry exactly {count} failed jobs?",
    "bulk.confirmCancel": "Cancel exactly {count} queued or running jobs?",
    "bulk.nothing": "No job that this action can change matches the filter.",
    "bulk.snapshot": "These are the jobs counted just now: the action applies to exactly them, not to the filter run again later. It runs on the server in batches of 500.",
    "bulk.filter": "Filter: {filter}",
    "bulk.cancelledLeftOut": "Jobs an admin cancelled (error code cancelled) are left out: filter by that error code to retry them.",
    "filter.receivedTo": "Received until",
    "filter.sender": "Sender",
    "filter.q": "Search",
    "overview.actions": "Jobs",
    "bulk.reason": "Reason (kept in the audit)",
    "bulk.applying": "Applying: {processed} of {count} done ({changed} changed, {skipped} not changed)",
    "bulk.done": "Done: {changed} of {count} jobs changed, {skipped} not changed.",
    "bulk.workers": "Workers were started for the jobs it queued.",
    "bulk.notChanged": "Not changed, and why",
    "job.heading": "Job {id}",
    "job.back": "← Back to the list",
    "job.retry": "Retry",
    "job.cancel": "Cancel job…",
    "job.cancelReason": "Why cancel it? (kept in the audit)",
    "job.retried": "The job is queued again; a worker was started.",
    "job.cancelled": "The job is cancelled.",
    "job.facts": "The job",
    "job.email": "The e-mail",
    "job.attachments": "Attachments",
    "job.noAttachments": "No attachment stored yet.",
    "job.noAttachmentsFinished": "No attachment was stored.",
    "job.actions": "Actions",
    "job.attempts": "Attempts",
    "job.noAttempts": "No attempt yet.",
    "job.download": "Download",
    "job.downloadHint": "a link valid for one minute",
    "job.created": "Received",
    "job.runAfter": "Not before",
    "job.finished": "Finished",
    "job.lastError": "Last error",
    "job.from": "From",
    "job.to": "To",
    "job.cc": "Cc",
    "job.subject": "Subject",
    "job.receivedAt": "Sent (provider's time)",
    "job.providerId": "Provider's e-mail id",
    "job.messageId": "Message-ID",
    "job.foundBy": "How it came in",
    "job.foundByWebhook": "By its webhook, as usual",
    "job.foundByReconciliation": "Found by reconciliation at {time}: no webhook delivered it, so it was taken from Resend's list of received e-mails",
    "job.name": "Name",
    "job.type": "Type",
    "job.size": "Size",
    "job.sha256": "SHA-256",
    "attempt.title": "Attempt {n}",
    "attempt.afterRetry": "after retry {retry}",
    "attempt.started": "started {time}",
    "attempt.took": "took {duration}",
    "attempt.invocation": "invocation {id}",
    "outcome.completed": "completed",
    "outcome.retried": "failed, retried",
    "outcome.released": "released",
    "outcome.failed": "failed",
    "outcome.lease_expired": "lease expired",
    "outcome.cancelled": "cancelled",
    // The fax viewer (viewer.js).
    "viewer.region": "Fax",
    "viewer.controls": "Pages",
    "viewer.pages": "The fax's pages",
    "viewer.loading": "Loading the pages…",
    "viewer.previous": "Previous page",
    "viewer.next": "Next page",
    "viewer.pageNumber": "Page number",
    "viewer.ofPages": "of {count}",
    "viewer.pageStatus": "Page {page} of {count}",
    "viewer.pageLabel": "Page {page}",
    "viewer.zoomOut": "Zoom out",
    "viewer.zoomIn": "Zoom in",
    "viewer.fitWidth": "Fit to width",
    "viewer.zoomed": "Zoom {percent}%",
    "viewer.rotate": "Rotate right",
    "viewer.rotated": "Rotated {degrees}°",
    "viewer.print": "Print",
    "viewer.preparingPrint": "Preparing page {page} of {count} for printing…",
    "viewer.printReady": "The pages are ready to print.",
    "viewer.printFailed": "The pages could not be prepared for printing. Download the original and print it.",
    "viewer.download": "Download the original",
    "viewer.downloadFailed": "The original could not be downloaded. Try again.",
    "viewer.cannotShow": "This file cannot be shown on the screen. Download the original to open it.",
    "viewer.loadFailed": "This file could not be shown. Download the original to open it.",
    "viewer.password": "This PDF is protected by a password and cannot be shown here. Download the original to open it.",
    "viewer.pageFailed": "Page {page} could not be drawn.",
    "viewer.nothing": "This fax has no file to show.",
    "audit.heading": "Audit: every operator action",
    "audit.none": "No action yet.",
    "audit.when": "When",
    "audit.who": "Who",
    "audit.service": "The service key (no operator named)",
    "audit.what": "Action",
    "audit.jobs": "Jobs",
    "audit.target": "Job or filter",
    "audit.reason": "Reason",
    "audit.result": "Result",
    "audit.bulkResult": "{changed} changed, {skipped} not changed",
    "audit.running": "in progress",
    "action.retry": "retry",
    "action.cancel": "cancel",
    "action.bulk_retry": "bulk retry",
    "action.bulk_cancel": "bulk cancel",
    // Who is dealing with a fax (handling.js).
    "handling.heading": "Who is dealing with it",
    "handling.new": "New",
    "handling.in_progress": "In progress",
    "handling.done": "Done",
    "handling.take": "Take it",
    "handling.markDone": "Mark done",
    "handling.reopen": "Back to new",
    "handling.assignee": "by {who}",
    "handling.updated": "marked {time}",
    "handling.note": "Note",
    "handling.noteHint": "e.g. asked the sender to send it again",
    "handling.saveNote": "Save the note",
    "handling.saved": "Marked: {state}.",
    "handling.noteSaved": "The note is saved.",
    "handling.changed": "Someone marked this fax since you opened it; this is how it stands now.",
    "handling.readOnly": "Clerks and admins mark who is dealing with a fax; viewers only read it.",
    "handling.history": "Marks",
    "handling.historyEntry": "{time}, {who}: {from} → {to}",
    "handling.noFax": "This job has no fax to mark.",
    "bulkDone.counting": "Counting the faxes…",
    "bulkDone.nothing": "No fax that is not done yet matches the filter.",
    "bulkDone.confirm": "Mark exactly {count} faxes done?",
    "bulkDone.snapshot": "These are the faxes of the jobs counted just now, each once, those already done left out: exactly they are marked, not the filter run again later.",
    "bulkDone.note": "Note (kept with each fax and in the audit)",
    "bulkDone.applying": "Marking: {processed} of {count} done ({changed} marked, {skipped} not)",
    "bulkDone.done": "Done: {changed} of {count} faxes marked done, {skipped} not.",
    "bulkDone.notChanged": "Not marked, and why",
    "job.retryCannotHelp": "No retry is offered: the advice says a retry cannot help with this error.",
    "overview.failedClosed": "Not counted: {count} failed jobs whose fax is marked done.",
    "audit.fax": "Fax {id}",
    "action.handle": "fax marked",
    "action.bulk_handle": "faxes marked done",
    "duration.s": "{n} s",
    "duration.min": "{n} min",
    "duration.h": "{n} h",
    "duration.d": "{n} d",
    "duration.ms": "{n} ms",
  },
  ja: {
    title: "FAX 受信箱 管理画面",
    "nav.overview": "概要",
    "nav.jobs": "ジョブ",
    "nav.audit": "操作履歴",
    "nav.skip": "本文へ移動",
    "language.label": "言語",
    "session.signOut": "ログアウト",
    "session.role.admin": "管理者",
    "session.role.viewer": "閲覧者（閲覧のみ）",
    "session.role.clerk": "担当者（閲覧・対応状況の記録）",
    "signIn.heading": "ログイン",
    "signIn.email": "メールアドレス",
    "signIn.password": "パスワード",
    "signIn.submit": "ログイン",
    "signIn.working": "ログインしています…",
    "signIn.refused": "ログインできませんでした（Supabase Authからのメッセージ: {message}）",
    "signIn.unreachable": "Supabase Auth に接続できませんでした。もう一度お試しください。",
    "signedOut.expired": "セッションの有効期限が切れ、更新できませんでした。もう一度ログインしてください。",
    "signedOut.ended": "セッションが終了しました（別の場所でログアウトしたか、権限が取り消されました）。もう一度ログインしてください。",
    "signedOut.otherTab": "別のタブでログアウトしました。",
    "signedOut.byYou": "ログアウトしました。",
    "signedOut.noRole": "このアカウントには管理画面の権限がありません。管理者に追加を依頼してください。",
    "common.loading": "読み込み中…",
    "common.none": "なし",
    "common.refresh": "更新",
    "common.cancel": "キャンセル",
    "common.close": "閉じる",
    "common.confirm": "実行",
    "common.older": "古い順へ →",
    "common.newer": "← 新しい順へ",
    "common.estimate": "推定",
    "common.error": "サーバーが拒否しました（{message}）。",
    "common.network": "管理 API に接続できませんでした。もう一度お試しください。",
    "explain.advice": "対処:",
    "explain.operatorAdvice": "システム管理者向け:",
    "explain.unknown": "（このコードの説明はまだありません）",
    "source.resend": "Resendからのメッセージ:",
    "source.storage": "Supabase Storageからのメッセージ:",
    "source.database": "データベースからのメッセージ:",
    "source.download": "添付ファイルのダウンロード先からのメッセージ:",
    "source.worker": "ワーカーの記録（英語）:",
    "source.operator": "入力された理由:",
    "state.all": "すべて",
    "state.queued": "待機中",
    "state.running": "実行中",
    "state.completed": "完了",
    "state.failed": "失敗",
    "overview.states": "状態別のジョブ数",
    "overview.completedEstimate": "完了の件数はテーブル統計による推定値です（ジョブの大半を占め、正確に数えるには全件を読む必要があるため）。",
    "overview.oldestWaiting": "最も長く待っているジョブ",
    "overview.waitingFor": "{duration} 待機中",
    "overview.nothingWaiting": "待機中のジョブはありません。",
    "overview.outages": "未解決の障害（ヘルスチェック）",
    "overview.noOutages": "未解決の障害はありません。",
    "overview.since": "{time} から",
    "overview.listedUpTo": "{time} までの受信メールは確認済みです。それ以降に受信し Webhook が届かなかったメールは {until} 以降は取り戻せません。実行するコマンド:",
    "overview.lastComplete": "最後に完了した照合: {time}",
    "overview.lastFinding": "前回の照合が途中で止まった理由:",
    "overview.unreadableCount": "読み取れなかったメール {count} 件（新しいものを表示）:",
    "overview.firstListed": "{time} に一覧に出現",
    "unreadable.field.id": "ID",
    "unreadable.field.created_at": "一覧上の日時",
    "unreadable.field.from": "送信者",
    "unreadable.field.to": "宛先",
    "unreadable.field.subject": "件名",
    "unreadable.field.message_id": "メッセージID",
    "unreadable.field.files": "ファイル",
    "unreadable.reason.no id": "IDがない",
    "unreadable.reason.an id that is not a string": "IDが文字列ではない",
    "unreadable.reason.an empty id": "IDが空",
    "unreadable.reason.a created_at that is not a time": "日時が読み取れない",
    "unreadable.reason.a created_at more than a day ahead of the database's clock": "日時が1日以上先",
    "unreadable.reason.not an object": "メールの項目ではない",
    "overview.perHour": "1時間ごとの完了・失敗ジョブ数",
    "overview.latency": "Webhook 受信から添付ファイル保存までの時間（1時間ごと）",
    "overview.range24h": "24時間",
    "overview.range7d": "7日間",
    "overview.failures24h": "直近24時間の失敗（エラーコード別）",
    "overview.failedNow": "現在失敗しているジョブ（エラーコード別）",
    "overview.noFailures": "失敗はありません。",
    "overview.showJobs": "ジョブを表示",
    "overview.dataTable": "数値を表で見る",
    "chart.completed": "完了",
    "chart.failed": "失敗",
    "chart.p50": "p50",
    "chart.p95": "p95",
    "chart.hour": "時刻",
    "column.errorCode": "エラーコード",
    "column.failed": "失敗（確定）",
    "column.retried": "再試行",
    "column.released": "保留",
    "column.other": "リース切れ・取消",
    "column.count": "件数",
    "column.received": "受信",
    "column.state": "状態",
    "column.kind": "種類",
    "column.attempts": "試行",
    "column.error": "最後のエラー",
    "column.from": "送信者",
    "column.subject": "件名",
    "column.job": "ジョブ",
    "jobs.filterKind": "種類",
    "jobs.anyKind": "すべて",
    "jobs.filterCode": "エラーコード",
    "jobs.filterFrom": "受信日時（から）",
    "jobs.filterTo": "まで",
    "jobs.search": "検索",
    "jobs.searchHint": "ジョブ ID、メール ID、プロバイダのメール ID、送信者、件名",
    "jobs.apply": "絞り込む",
    "jobs.filters": "絞り込み条件",
    "jobs.filtersActive": "{count} 件設定中",
    "jobs.timeFormat": "日時は YYYY-MM-DD HH:MM の形で、この端末のタイムゾーン（{offset}）で入力します。",
    "jobs.timeInvalid": "日時は YYYY-MM-DD HH:MM の形で入力してください（例: 2026-12-01 09:00）。",
    "jobs.results": "該当するジョブ",
    "jobs.clear": "クリア",
    "jobs.count": "{count} 件",
    "jobs.countOne": "1 件",
    "jobs.countCapped": "{count} 件以上",
    "jobs.none": "該当するジョブはありません。",
    "jobs.partial": "{time} までの新しいジョブを検索しました。3文字未満の語は検索インデックスを使えません。「古い順へ」でさらに検索します。",
    "jobs.autoRefresh": "10秒ごとに自動更新",
    "jobs.refreshedAt": "{time} に更新",
    "jobs.bulkRetry": "該当する失敗ジョブをすべて再実行…",
    "jobs.bulkCancel": "該当する待機中・実行中のジョブをすべて取消…",
    "jobs.viewerHint": "閲覧者はすべて閲覧できますが、操作できるのは管理者だけです。",
    "jobs.clerkHint": "担当者は FAX の対応状況を記録できます。ジョブの再実行・取消は管理者だけができます。",
    "jobs.bulkDone": "該当するFAXをすべて対応済みにする…",
    "bulk.counting": "ジョブを数えています…",
    "bulk.confirmRetry": "失敗ジョブ {count} 件を再実行しますか？",
    "bulk.confirmCancel": "待機中・実行中のジョブ {count} 件を取り消しますか？",
    "bulk.nothing": "この操作で変更できるジョブは条件に該当しません。",
    "bulk.snapshot": "今数えたジョブそのものに対して実行されます（後で条件を再評価することはありません）。サーバー上で 500 件ずつ処理します。",
    "bulk.filter": "条件: {filter}",
    "bulk.cancelledLeftOut": "管理者が取り消したジョブ（エラーコード cancelled）は含みません。再実行するには、そのエラーコードで絞り込んでください。",
    "filter.receivedTo": "受信日時（まで）",
    "filter.sender": "送信者",
    "filter.q": "検索",
    "overview.actions": "ジョブ",
    "bulk.reason": "理由（操作履歴に残ります）",
    "bulk.applying": "処理中: {count} 件中 {processed} 件完了（変更 {changed} 件、未変更 {skipped} 件）",
    "bulk.done": "完了: {count} 件中 {changed} 件を変更、{skipped} 件は未変更です。",
    "bulk.workers": "再投入したジョブのためにワーカーを起動しました。",
    "bulk.notChanged": "変更しなかったジョブと理由",
    "job.heading": "ジョブ {id}",
    "job.back": "← 一覧に戻る",
    "job.retry": "再実行",
    "job.cancel": "ジョブを取消…",
    "job.cancelReason": "取り消す理由（操作履歴に残ります）",
    "job.retried": "ジョブを再投入し、ワーカーを起動しました。",
    "job.cancelled": "ジョブを取り消しました。",
    "job.facts": "ジョブ",
    "job.email": "メール",
    "job.attachments": "添付ファイル",
    "job.noAttachments": "保存済みの添付ファイルはまだありません。",
    "job.noAttachmentsFinished": "保存された添付ファイルはありません。",
    "job.actions": "操作",
    "job.attempts": "試行",
    "job.noAttempts": "まだ試行していません。",
    "job.download": "ダウンロード",
    "job.downloadHint": "1分間有効なリンク",
    "job.created": "受信",
    "job.runAfter": "次の実行",
    "job.finished": "終了",
    "job.lastError": "最後のエラー",
    "job.from": "送信者",
    "job.to": "宛先",
    "job.cc": "Cc",
    "job.subject": "件名",
    "job.receivedAt": "送信日時（プロバイダ）",
    "job.providerId": "プロバイダのメール ID",
    "job.messageId": "Message-ID",
    "job.foundBy": "取り込み経路",
    "job.foundByWebhook": "通常どおり Webhook で受信",
    "job.foundByReconciliation": "{time} に照合で見つかりました。Webhook が届かなかったため、Resend の受信一覧から取り込みました。",
    "job.name": "ファイル名",
    "job.type": "形式",
    "job.size": "サイズ",
    "job.sha256": "SHA-256",
    "attempt.title": "試行 {n}",
    "attempt.afterRetry": "{retry} 回目の再実行の後",
    "attempt.started": "{time} 開始",
    "attempt.took": "所要 {duration}",
    "attempt.invocation": "呼び出し {id}",
    "outcome.completed": "完了",
    "outcome.retried": "失敗・再試行",
    "outcome.released": "保留",
    "outcome.failed": "失敗",
    "outcome.lease_expired": "リース切れ",
    "outcome.cancelled": "取消",
    // FAXビューア（viewer.js）
    "viewer.region": "FAX",
    "viewer.controls": "ページ操作",
    "viewer.pages": "FAXのページ",
    "viewer.loading": "ページを読み込んでいます…",
    "viewer.previous": "前のページ",
    "viewer.next": "次のページ",
    "viewer.pageNumber": "ページ番号",
    "viewer.ofPages": "/ {count}",
    "viewer.pageStatus": "{count}ページ中 {page}ページ目",
    "viewer.pageLabel": "{page}ページ目",
    "viewer.zoomOut": "縮小",
    "viewer.zoomIn": "拡大",
    "viewer.fitWidth": "幅に合わせる",
    "viewer.zoomed": "表示倍率 {percent}%",
    "viewer.rotate": "右に回転",
    "viewer.rotated": "{degrees}°回転しました",
    "viewer.print": "印刷",
    "viewer.preparingPrint": "印刷の準備をしています（{count}ページ中 {page}ページ目）…",
    "viewer.printReady": "印刷の準備ができました。",
    "viewer.printFailed": "印刷の準備ができませんでした。原本をダウンロードして印刷してください。",
    "viewer.download": "原本をダウンロード",
    "viewer.downloadFailed": "原本をダウンロードできませんでした。もう一度お試しください。",
    "viewer.cannotShow": "このファイルは画面に表示できません。原本をダウンロードして開いてください。",
    "viewer.loadFailed": "このファイルを表示できませんでした。原本をダウンロードして開いてください。",
    "viewer.password": "このPDFはパスワードで保護されているため、ここでは表示できません。原本をダウンロードして開いてください。",
    "viewer.pageFailed": "{page}ページ目を表示できませんでした。",
    "viewer.nothing": "このFAXには表示するファイルがありません。",
    "audit.heading": "操作履歴（すべての操作）",
    "audit.none": "まだ操作はありません。",
    "audit.when": "日時",
    "audit.who": "操作者",
    "audit.service": "サービスキーによる操作（操作者の記録なし）",
    "audit.what": "操作",
    "audit.jobs": "件数",
    "audit.target": "ジョブまたは条件",
    "audit.reason": "理由",
    "audit.result": "結果",
    "audit.bulkResult": "変更 {changed} 件、未変更 {skipped} 件",
    "audit.running": "処理中",
    "action.retry": "再実行",
    "action.cancel": "取消",
    "action.bulk_retry": "一括再実行",
    "action.bulk_cancel": "一括取消",
    // FAXの対応状況（handling.js）
    "handling.heading": "対応状況",
    "handling.new": "未対応",
    "handling.in_progress": "対応中",
    "handling.done": "対応済み",
    "handling.take": "対応中にする",
    "handling.markDone": "対応済みにする",
    "handling.reopen": "未対応に戻す",
    "handling.assignee": "担当: {who}",
    "handling.updated": "{time} に記録",
    "handling.note": "メモ",
    "handling.noteHint": "例: 送信元に再送を依頼済み",
    "handling.saveNote": "メモを保存",
    "handling.saved": "「{state}」にしました。",
    "handling.noteSaved": "メモを保存しました。",
    "handling.changed": "開いた後に、ほかの人がこの FAX の対応状況を変更しました。現在の状況を表示しています。",
    "handling.readOnly": "対応状況を記録できるのは担当者と管理者です。閲覧者は見ることだけができます。",
    "handling.history": "対応の履歴",
    "handling.historyEntry": "{time}　{who}: {from} → {to}",
    "handling.noFax": "このジョブには対応状況を記録する FAX がありません。",
    "bulkDone.counting": "FAX を数えています…",
    "bulkDone.nothing": "条件に該当する未完了の FAX はありません。",
    "bulkDone.confirm": "FAX {count} 件を対応済みにしますか？",
    "bulkDone.snapshot": "今数えたジョブの FAX（1件につき1回、対応済みのものは除く）そのものを対応済みにします（後で条件を再評価することはありません）。",
    "bulkDone.note": "メモ（各 FAX と操作履歴に残ります）",
    "bulkDone.applying": "処理中: {count} 件中 {processed} 件完了（対応済みにした {changed} 件、しなかった {skipped} 件）",
    "bulkDone.done": "完了: {count} 件中 {changed} 件を対応済みにしました。{skipped} 件は変更していません。",
    "bulkDone.notChanged": "対応済みにしなかった FAX と理由",
    "job.retryCannotHelp": "このエラーは再実行しても解決しないため、「再実行」は表示していません。",
    "overview.failedClosed": "対応済みの FAX の失敗ジョブ {count} 件は含みません。",
    "audit.fax": "FAX {id}",
    "action.handle": "対応状況の記録",
    "action.bulk_handle": "一括で対応済み",
    "duration.s": "{n}秒",
    "duration.min": "{n}分",
    "duration.h": "{n}時間",
    "duration.d": "{n}日",
    "duration.ms": "{n}ミリ秒",
  },
};

export const LANGUAGES = { en: "English", ja: "日本語" };

/** @returns {string} */
function preferred() {
  const chosen = localStorage.getItem(STORAGE_KEY);
  if (chosen !== null && chosen in MESSAGES) return chosen;
  for (const language of navigator.languages || [navigator.language]) {
    const base = (language || "").toLowerCase().split("-")[0];
    if (base in MESSAGES) return base;
  }
  return "en";
}

let current = preferred();

export function language() {
  return current;
}

/** @param {string} next a language's code */
export function setLanguage(next) {
  current = next in MESSAGES ? next : "en";
  localStorage.setItem(STORAGE_KEY, current);
  document.documentElement.lang = current;
}

/**
 * The message for `key` with {names} filled in (as text: the caller puts it in a text node).
 * @param {string} key
 * @param {Record<string, string | number>} [params]
 * @returns {string}
 */
export function t(key, params = {}) {
  const template = MESSAGES[current][key] ?? MESSAGES.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, /** @type {string} */ name) => (name in params ? String(params[name]) : `{${name}}`));
}

/** @param {number} value */
export function number(value) {
  return new Intl.NumberFormat(current).format(value);
}

/** @param {number} n */
const two = (n) => String(n).padStart(2, "0");

/**
 * A time in the viewer's zone (the browser's) with its UTC offset, as the CLI prints it in its TZ
 * (lib/admin/display.py absolute_time): "2026-12-02 06:29:59 +09:00". The same in every language,
 * so that the screen and the CLI agree to the second in the same zone.
 * @param {string | Date} value
 */
export function absoluteTime(value) {
  const at = new Date(value);
  const offset = -at.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const zone = `${sign}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} `
    + `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())} ${zone}`;
}

/**
 * How long ago (or from now), in the page's language: "3 minutes ago", "3 分前".
 * @param {string | Date} value
 * @param {number} [now] ms since the epoch
 */
export function relativeTime(value, now = Date.now()) {
  const seconds = (new Date(value).getTime() - now) / 1000;
  const format = new Intl.RelativeTimeFormat(current, { numeric: "auto" });
  /** @type {Array<[Intl.RelativeTimeFormatUnit, number]>} */
  const units = [["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size || unit === "second") return format.format(Math.trunc(seconds / size), unit);
  }
  return "";
}

/**
 * The one way the page shows a time: its UTC offset in the viewer's zone, how long ago beside it.
 * @param {string | Date | null | undefined} value a time (ISO 8601), or none
 */
export function dateTime(value) {
  if (!value) return "";
  return `${absoluteTime(value)} (${relativeTime(value)})`;
}

/**
 * @param {string} value an hour's start (ISO 8601)
 * @param {boolean} withDay
 */
export function hourLabel(value, withDay) {
  /** @type {Intl.DateTimeFormatOptions} */
  const options = withDay ? { month: "numeric", day: "numeric", hour: "numeric" } : { hour: "numeric" };
  return new Intl.DateTimeFormat(current, options).format(new Date(value));
}

/** @param {number | null | undefined} seconds */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 1) return t("duration.ms", { n: number(Math.round(seconds * 1000)) });
  if (seconds < 120) return t("duration.s", { n: number(Math.round(seconds * 10) / 10) });
  if (seconds < 7200) return t("duration.min", { n: number(Math.round(seconds / 60)) });
  if (seconds < 172800) return t("duration.h", { n: number(Math.round(seconds / 360) / 10) });
  return t("duration.d", { n: number(Math.round(seconds / 8640) / 10) });
}

/** @param {number | null | undefined} size */
export function bytes(size) {
  if (size === null || size === undefined) return "";
  const units = ["B", "KB", "MB", "GB"];
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${number(unit ? Math.round(value * 10) / 10 : value)} ${units[unit]}`;
}

document.documentElement.lang = current;
