// @ts-check
// Written by `make explanations` from lib/failures.py and lib/explanations.py: do not edit here.
// Every code the screen shows, what it means and what to do, in English and Japanese: the
// clerk's advice for everyone, and the operator's (when it says more) for admins.

/** @typedef {{ meaning: string, clerk: string, operator?: string }} Said */
/** @typedef {{ en: Said, ja: Said, source?: string, retry?: false }} Explained */
// retry: false where the advice says a retry cannot help: the screen offers no retry for the code.
/** @type {Record<"job" | "outage" | "finding" | "refusal" | "auth", Record<string, Explained>>} */
export const EXPLANATIONS = {
  "job": {
    "attachment_too_large": {
      "source": "worker",
      "en": {
        "meaning": "an attachment is larger than ATTACHMENT_MAX_BYTES",
        "clerk": "The fax is larger than this system takes. Call your system administrator, who can still get it from the e-mail service; if it is urgent, ask the sender to send it in parts.",
        "operator": "Fetch the fax from the Resend dashboard (Emails, Receiving), or raise ATTACHMENT_MAX_BYTES on Vercel, redeploy and press “Retry”."
      },
      "ja": {
        "meaning": "添付ファイルが上限（ATTACHMENT_MAX_BYTES）より大きいです。",
        "clerk": "FAX が大きすぎて取り込めません。システム管理者に連絡してください（受信サービスから取り出せます）。急ぐ場合は、送信者に分けて送るよう依頼してください。",
        "operator": "Resend のダッシュボード（Emails → Receiving）から取得するか、Vercel の ATTACHMENT_MAX_BYTES を上げて再デプロイし、「再実行」を押してください。"
      }
    },
    "cancelled": {
      "source": "operator",
      "en": {
        "meaning": "an admin cancelled the job (the message is their reason)",
        "clerk": "Nothing to do. “Audit” says who did it and why; if it was a mistake, press “Retry”.",
        "operator": "Nothing to do; if it was a mistake, press “Retry”. “Retry every failed job that matches…” leaves these jobs out unless its “Error code” is cancelled."
      },
      "ja": {
        "meaning": "管理者がジョブを取り消しました（メッセージはその理由です）。",
        "clerk": "対応は不要です。操作した人と理由は「操作履歴」で確認できます。誤りだった場合は「再実行」を押してください。",
        "operator": "対応は不要です。誤りだった場合は「再実行」を押してください。「該当する失敗ジョブをすべて再実行…」は、「エラーコード」を cancelled で絞り込んだ場合を除き、このジョブを含みません。"
      }
    },
    "database_error": {
      "source": "database",
      "en": {
        "meaning": "the database (PostgREST) failed or could not be reached",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If many jobs show it, check status.supabase.com. A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "データベース（PostgREST）がエラーを返したか、接続できませんでした。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。多くのジョブで起きている場合は status.supabase.com を確認してください。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "database_unauthorized": {
      "source": "database",
      "en": {
        "meaning": "the database (PostgREST) refused the server key (401/403: a JWT error, permission denied)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own."
      },
      "ja": {
        "meaning": "データベース（PostgREST）がサーバーキーを拒否したか、権限が足りません（401/403）。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
      }
    },
    "download_expired": {
      "source": "download",
      "en": {
        "meaning": "an attachment's download URL answered 403 even after listing afresh",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "添付ファイルのダウンロードURLが、取得し直した後も403を返しました。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "download_failed": {
      "source": "download",
      "en": {
        "meaning": "an attachment download failed (network, timeout, 5xx, or fewer or more bytes than listed)",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "添付ファイルのダウンロードに失敗しました（通信、タイムアウト、5xx、またはサイズの不一致）。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "email_not_found": {
      "source": "worker",
      "retry": false,
      "en": {
        "meaning": "the job's e-mail row does not exist",
        "clerk": "Pressing “Retry” does not help: the record of this fax was deleted. Call your system administrator with the job's id.",
        "operator": "“Retry” does not help: the e-mail's record was deleted. Nothing else is affected."
      },
      "ja": {
        "meaning": "ジョブの対象のメールの記録がデータベースにありません。",
        "clerk": "「再実行」を押しても解決しません。この FAX の記録が削除されています。ジョブの ID を添えてシステム管理者に連絡してください。",
        "operator": "「再実行」を押しても解決しません。メールの記録が削除されています。ほかへの影響はありません。"
      }
    },
    "fax_file_damaged": {
      "source": "worker",
      "retry": false,
      "en": {
        "meaning": "the stored fax could not be read for viewing: the file is damaged, cut short, or not what its type says",
        "clerk": "The fax is stored unchanged, but it cannot be shown here: download the original and open it on the computer. Pressing “Retry” gives the same result. If the original does not open either, ask the sender to send the fax again.",
        "operator": "Nothing is lost: the original is stored unchanged and downloads as it came; only its viewing copy and thumbnail are missing. “Retry” gives the same result for the same file."
      },
      "ja": {
        "meaning": "ファイルが壊れているか途中で切れているため、表示用の変換ができませんでした。",
        "clerk": "FAX はそのまま保存されていますが、画面には表示できません。原本をダウンロードしてパソコンで開いてください。「再実行」を押しても結果は変わりません。原本も開けない場合は、送信元に再送を依頼してください。",
        "operator": "失われたものはありません。原本は変更されずに保存されており、届いたとおりにダウンロードできます。ないのは表示用の変換とサムネイルだけです。同じファイルでは「再実行」を押しても結果は変わりません。"
      }
    },
    "fax_file_empty": {
      "source": "worker",
      "retry": false,
      "en": {
        "meaning": "the stored fax has no pages",
        "clerk": "The fax is stored unchanged, but it cannot be shown here: download the original and open it on the computer. Pressing “Retry” gives the same result. If it is empty there too, ask the sender to send the fax again.",
        "operator": "Nothing is lost: the original is stored unchanged and downloads as it came; only its viewing copy and thumbnail are missing. “Retry” gives the same result for the same file."
      },
      "ja": {
        "meaning": "ページが1枚もないファイルのため、表示用の変換ができませんでした。",
        "clerk": "FAX はそのまま保存されていますが、画面には表示できません。原本をダウンロードしてパソコンで開いてください。「再実行」を押しても結果は変わりません。原本も空の場合は、送信元に再送を依頼してください。",
        "operator": "失われたものはありません。原本は変更されずに保存されており、届いたとおりにダウンロードできます。ないのは表示用の変換とサムネイルだけです。同じファイルでは「再実行」を押しても結果は変わりません。"
      }
    },
    "fax_file_encrypted": {
      "source": "worker",
      "retry": false,
      "en": {
        "meaning": "the stored fax is a PDF protected by a password, so it could not be read for viewing",
        "clerk": "The fax is stored unchanged, but it cannot be shown here: download the original and open it on the computer. Pressing “Retry” gives the same result. It opens with the password the sender gives.",
        "operator": "Nothing is lost: the original is stored unchanged and downloads as it came; only its viewing copy and thumbnail are missing. “Retry” gives the same result for the same file."
      },
      "ja": {
        "meaning": "パスワードで保護されたPDFのため、表示用の変換ができませんでした。",
        "clerk": "FAX はそのまま保存されていますが、画面には表示できません。原本をダウンロードしてパソコンで開いてください。「再実行」を押しても結果は変わりません。送信元から聞いたパスワードで開けます。",
        "operator": "失われたものはありません。原本は変更されずに保存されており、届いたとおりにダウンロードできます。ないのは表示用の変換とサムネイルだけです。同じファイルでは「再実行」を押しても結果は変わりません。"
      }
    },
    "fax_page_too_large": {
      "source": "worker",
      "retry": false,
      "en": {
        "meaning": "a page of the stored fax is larger than the pixel cap (lib/worker/fax_pages.py MAX_PAGE_PIXELS) or than PDF's largest page: a decompression bomb is not drawn",
        "clerk": "The fax is stored unchanged, but it cannot be shown here: download the original and open it on the computer. Pressing “Retry” gives the same result.",
        "operator": "Nothing is lost: the original is stored unchanged and downloads as it came; only its viewing copy and thumbnail are missing. “Retry” gives the same result for the same file."
      },
      "ja": {
        "meaning": "ページの大きさ（画素数）が上限を超えているため、表示用の変換ができませんでした。",
        "clerk": "FAX はそのまま保存されていますが、画面には表示できません。原本をダウンロードしてパソコンで開いてください。「再実行」を押しても結果は変わりません。",
        "operator": "失われたものはありません。原本は変更されずに保存されており、届いたとおりにダウンロードできます。ないのは表示用の変換とサムネイルだけです。同じファイルでは「再実行」を押しても結果は変わりません。"
      }
    },
    "internal_error": {
      "source": "worker",
      "en": {
        "meaning": "an unexpected error in the worker (a bug): see the logs",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, call your system administrator with the job's id.",
        "operator": "The job is tried again on its own. If it ends “Failed”, report it to the developers with the job id (the worker's logs on Vercel name the error)."
      },
      "ja": {
        "meaning": "ワーカーで予期しないエラー（不具合）が起きました。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は、ジョブの ID を添えてシステム管理者に連絡してください。",
        "operator": "ジョブは自動で再試行されます。「失敗」になった場合は、ジョブIDを添えて開発者に連絡してください（Vercel のワーカーのログにエラーが記録されています）。"
      }
    },
    "lease_expired": {
      "source": "worker",
      "en": {
        "meaning": "the worker running the job stopped answering (it ran past its time or crashed) and its lease ran out",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If many jobs show it, check the worker's logs on Vercel (timeouts, crashes). A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "ジョブを実行中のワーカーが応答しなくなり（時間切れまたは異常終了）、実行権の期限が切れました。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。多くのジョブで起きている場合は、Vercel のワーカーのログ（タイムアウト、異常終了）を確認してください。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "original_altered": {
      "source": "worker",
      "en": {
        "meaning": "the stored original's bytes are not those recorded (their SHA-256 differs from its row's)",
        "clerk": "The stored original of this fax is missing or changed. Do not rely on what the screen shows of it: call your system administrator today with the job's id.",
        "operator": "A stored original must never change or go: check the bucket in Supabase's Storage (who deleted or overwrote the object, and when) and report it to the developers with the job id. Fetch the fax again from the Resend dashboard (Emails, Receiving) while Resend still has it."
      },
      "ja": {
        "meaning": "保存済みの原本の中身が、記録した内容（SHA-256）と一致しません。",
        "clerk": "この FAX の保存済みの原本が見つからないか、変更されています。画面の表示をそのまま使わず、ジョブの ID を添えて今日中にシステム管理者に連絡してください。",
        "operator": "保存した原本が変更・削除されることはあってはなりません。Supabase の Storage でバケットを確認し（いつ誰がファイルを削除・上書きしたか）、ジョブIDを添えて開発者に連絡してください。Resend にまだ残っていれば、Resend のダッシュボード（Emails → Receiving）から取得し直してください。"
      }
    },
    "original_missing": {
      "source": "worker",
      "en": {
        "meaning": "the stored original is not in Storage (404) although its row says it was stored",
        "clerk": "The stored original of this fax is missing or changed. Do not rely on what the screen shows of it: call your system administrator today with the job's id.",
        "operator": "A stored original must never change or go: check the bucket in Supabase's Storage (who deleted or overwrote the object, and when) and report it to the developers with the job id. Fetch the fax again from the Resend dashboard (Emails, Receiving) while Resend still has it."
      },
      "ja": {
        "meaning": "保存済みのはずの原本が Supabase Storage にありません。",
        "clerk": "この FAX の保存済みの原本が見つからないか、変更されています。画面の表示をそのまま使わず、ジョブの ID を添えて今日中にシステム管理者に連絡してください。",
        "operator": "保存した原本が変更・削除されることはあってはなりません。Supabase の Storage でバケットを確認し（いつ誰がファイルを削除・上書きしたか）、ジョブIDを添えて開発者に連絡してください。Resend にまだ残っていれば、Resend のダッシュボード（Emails → Receiving）から取得し直してください。"
      }
    },
    "resend_malformed_response": {
      "source": "resend",
      "en": {
        "meaning": "Resend's answer did not have the documented shape (the message names the field)",
        "clerk": "Press “Retry” a little later. If it fails the same way, call your system administrator with the job's id.",
        "operator": "Press “Retry” later; if it fails the same way, report it to the developers with the job id (Resend may have changed its API)."
      },
      "ja": {
        "meaning": "Resend の応答が仕様どおりの形ではありませんでした（メッセージに項目名があります）。",
        "clerk": "しばらくしてから「再実行」を押してください。同じように失敗する場合は、ジョブの ID を添えてシステム管理者に連絡してください。",
        "operator": "しばらくしてから「再実行」を押してください。同じように失敗する場合は、ジョブIDを添えて開発者に連絡してください（Resend の API が変わった可能性があります）。"
      }
    },
    "resend_misconfigured": {
      "source": "resend",
      "en": {
        "meaning": "RESEND_API_URL is not Resend's API: a redirect, 405, or a 404 for the endpoint itself",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Unset RESEND_API_URL on Vercel (the default is https://api.resend.com) and redeploy: the waiting jobs are tried again every 10 minutes."
      },
      "ja": {
        "meaning": "RESEND_API_URL が Resend の API を指していません（リダイレクト、405、またはエンドポイント自体の404）。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の RESEND_API_URL を削除して（既定値は https://api.resend.com）再デプロイしてください。待機中のジョブは10分ごとに再試行されます。"
      }
    },
    "resend_network_error": {
      "source": "resend",
      "en": {
        "meaning": "Resend could not be reached, or the connection broke",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If many jobs show it, check Resend's status page (resend-status.com). A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "Resend に接続できなかったか、通信が途中で切れました。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。多くのジョブで起きている場合は、Resend の稼働状況ページ（resend-status.com）を確認してください。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "resend_not_found": {
      "source": "resend",
      "retry": false,
      "en": {
        "meaning": "Resend does not know the e-mail (404 not_found, 410)",
        "clerk": "Pressing “Retry” does not help: the e-mail service no longer has this fax. Ask the sender to send it again, then close this one with “Mark done” and a note (for example: asked the sender to send it again).",
        "operator": "“Retry” does not help: the e-mail is gone from Resend. The e-mail's row keeps what its webhook said (sender, subject, time): ask the sender to send the fax again, and close this one with “Mark done” (many at once: “Mark done every fax that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "Resend にこのメールが見つかりません（404 not_found、410）。削除されたか、保存期間が過ぎています。",
        "clerk": "「再実行」を押しても解決しません。受信サービスにこの FAX が残っていないため、送信者に再送を依頼し、メモ（例: 送信元に再送を依頼済み）を付けて「対応済みにする」を押してください。",
        "operator": "「再実行」を押しても解決しません。メールは Resend から消えています。メールの記録には Webhook の内容（送信者、件名、日時）が残っているので、送信者に再送を依頼し、この FAX は「対応済みにする」で閉じてください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当するFAXをすべて対応済みにする…」）。"
      }
    },
    "resend_quota_exceeded": {
      "source": "resend",
      "en": {
        "meaning": "Resend's daily or monthly quota is used up",
        "clerk": "Faxes wait until the e-mail service's plan allows more, and come in on their own then. Tell whoever manages the e-mail service's plan (Resend) soon.",
        "operator": "Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the waiting jobs are tried again every hour."
      },
      "ja": {
        "meaning": "Resend の1日または1か月の利用上限に達しました。",
        "clerk": "受信サービスの契約の上限に達したため、FAX の取り込みを待っています。上限が解除されれば自動で取り込まれます。受信サービス（Resend）の契約を管理している方に早めに連絡してください。",
        "operator": "Resend のダッシュボード（Billing）でプランを上げるか、上限のリセットを待ってください。待機中のジョブは1時間ごとに再試行されます。"
      }
    },
    "resend_rate_limit_wait": {
      "source": "resend",
      "en": {
        "meaning": "the shared limiter's next Resend slot is further away than the time budget allows",
        "clerk": "Nothing to do: it goes on by itself in a moment.",
        "operator": "Nothing to do: the next run goes on with the job; no attempt was spent."
      },
      "ja": {
        "meaning": "Resend の呼び出し枠の空きを待つ時間が、この実行の残り時間より長くなりました。",
        "clerk": "対応は不要です。少し待ってから自動で続きます。",
        "operator": "対応は不要です。次の実行がこのジョブを続けます（試行回数は消費していません）。"
      }
    },
    "resend_rate_limited": {
      "source": "resend",
      "en": {
        "meaning": "Resend answered 429 rate_limit_exceeded; its retry-after is honoured",
        "clerk": "Nothing to do: it goes on by itself in a moment.",
        "operator": "Nothing to do: the job waits as Resend asks and goes on. If it happens often, another application of the Resend team is using the same limit."
      },
      "ja": {
        "meaning": "Resend の呼び出し回数の上限（1秒あたり）に達しました（429 rate_limit_exceeded）。",
        "clerk": "対応は不要です。少し待ってから自動で続きます。",
        "operator": "対応は不要です。Resend の指示どおり待ってから続行します。頻繁に起きる場合は、同じ Resend チームの別のアプリケーションが同じ上限を使っています。"
      }
    },
    "resend_rejected": {
      "source": "resend",
      "retry": false,
      "en": {
        "meaning": "Resend refused the request as invalid for this e-mail (400 about a field, 413, 414, 422, 431)",
        "clerk": "Pressing “Retry” does not help. Ask the sender to send the fax again, and tell your system administrator the job's id; then close this one with “Mark done” and a note.",
        "operator": "“Retry” does not help. Ask the sender to send the fax again, or fetch it from the Resend dashboard (Emails, Receiving)."
      },
      "ja": {
        "meaning": "Resend がこのメールへの要求を不正として拒否しました（項目についての400、413、414、422、431）。",
        "clerk": "「再実行」を押しても解決しません。送信者に再送を依頼し、ジョブの ID をシステム管理者に伝えてから、メモを付けて「対応済みにする」を押してください。",
        "operator": "「再実行」を押しても解決しません。送信者に再送を依頼するか、Resend のダッシュボード（Emails → Receiving）から取得してください。"
      }
    },
    "resend_timeout": {
      "source": "resend",
      "en": {
        "meaning": "Resend (or a proxy in front of it: 408) did not answer in time",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If many jobs show it, check Resend's status page (resend-status.com). A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "Resend（またはその手前の中継、408）が時間内に応答しませんでした。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。多くのジョブで起きている場合は、Resend の稼働状況ページ（resend-status.com）を確認してください。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "resend_unauthorized": {
      "source": "resend",
      "en": {
        "meaning": "RESEND_API_KEY is missing, deleted, invalid or lacks receiving permission (400 validation_error naming the API key, 401, 403)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own."
      },
      "ja": {
        "meaning": "Resend が API キー（RESEND_API_KEY）を拒否しました。未設定・削除済み・誤り、または受信の権限がない（送信専用の）キーです。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Resend のダッシュボード（API Keys）でフルアクセスのキーを作成し、Vercel の RESEND_API_KEY に設定して再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
      }
    },
    "resend_unavailable": {
      "source": "resend",
      "en": {
        "meaning": "Resend answered 5xx, or 409, 423 or 425 (a conflicting or early request: a state that passes)",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If many jobs show it, check Resend's status page (resend-status.com). A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "Resend が一時的なエラーを返しました（5xx、または409・423・425）。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。多くのジョブで起きている場合は、Resend の稼働状況ページ（resend-status.com）を確認してください。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "resend_unexpected_answer": {
      "source": "resend",
      "en": {
        "meaning": "an answer Resend does not document for this endpoint (another 4xx, a 1xx or 2xx but 200)",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If it ends “Failed”, report it to the developers with the job id."
      },
      "ja": {
        "meaning": "Resend が、このエンドポイントの仕様にない応答を返しました（その他の4xx、200以外の1xx・2xx）。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。「失敗」になった場合は、ジョブIDを添えて開発者に連絡してください。"
      }
    },
    "storage_bucket_not_found": {
      "source": "storage",
      "en": {
        "meaning": "Storage has no bucket of that name (404 Bucket not found, NoSuchBucket, InvalidBucketName)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Fix or unset ATTACHMENTS_BUCKET on Vercel (the migrations create fax-attachments, the default) and redeploy, or create the bucket: the waiting jobs are tried again every 10 minutes."
      },
      "ja": {
        "meaning": "Supabase Storage に ATTACHMENTS_BUCKET の名前のバケットがありません。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の ATTACHMENTS_BUCKET を直すか削除して（マイグレーションが既定の fax-attachments を作成します）再デプロイするか、バケットを作成してください。待機中のジョブは10分ごとに再試行されます。"
      }
    },
    "storage_invalid_key": {
      "source": "storage",
      "en": {
        "meaning": "Storage refused the object key (InvalidKey)",
        "clerk": "Press “Retry”. If it fails the same way, call your system administrator with the job's id.",
        "operator": "Press “Retry”. If it fails the same way again, report it to the developers with the job id."
      },
      "ja": {
        "meaning": "Supabase Storage が保存先のパス（InvalidKey）を拒否しました。",
        "clerk": "「再実行」を押してください。同じように失敗する場合は、ジョブの ID を添えてシステム管理者に連絡してください。",
        "operator": "「再実行」を押してください。同じように失敗する場合は、ジョブIDを添えて開発者に連絡してください。"
      }
    },
    "storage_rejected": {
      "source": "storage",
      "en": {
        "meaning": "Storage refused the upload for another reason (4xx)",
        "clerk": "Press “Retry”. If it fails the same way, call your system administrator with the job's id.",
        "operator": "Press “Retry”. If it fails the same way again, report it to the developers with the job id."
      },
      "ja": {
        "meaning": "Supabase Storage がその他の理由（4xx）で保存を拒否しました。",
        "clerk": "「再実行」を押してください。同じように失敗する場合は、ジョブの ID を添えてシステム管理者に連絡してください。",
        "operator": "「再実行」を押してください。同じように失敗する場合は、ジョブIDを添えて開発者に連絡してください。"
      }
    },
    "storage_too_large": {
      "source": "storage",
      "en": {
        "meaning": "Storage refused the object as too large (413)",
        "clerk": "Call your system administrator to raise the storage's size limit; then press “Retry”.",
        "operator": "Raise the file size limit of the bucket (and of the project) in Supabase's Storage settings, then press “Retry”."
      },
      "ja": {
        "meaning": "Supabase Storage がファイルを大きすぎるとして拒否しました（413）。",
        "clerk": "保存先のサイズの上限を上げるよう、システム管理者に連絡してください。上がったら「再実行」を押してください。",
        "operator": "Supabase の Storage 設定でバケット（とプロジェクト）のファイルサイズ上限を上げてから、「再実行」を押してください。"
      }
    },
    "storage_unauthorized": {
      "source": "storage",
      "en": {
        "meaning": "Storage refused the server key (401/403: InvalidJWT, AccessDenied)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own."
      },
      "ja": {
        "meaning": "Supabase Storage がサーバーキーを拒否しました（401/403: InvalidJWT、AccessDenied）。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
      }
    },
    "storage_unavailable": {
      "source": "storage",
      "en": {
        "meaning": "Storage answered 5xx, 429 or 544, or could not be reached",
        "clerk": "Nothing to do: it is tried again on its own. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do: the job is tried again on its own. If many jobs show it, check status.supabase.com. A job that ended “Failed”: press “Retry” once the cause is gone (many at once: “Retry every failed job that matches…” on “Jobs”, filtered by this error code)."
      },
      "ja": {
        "meaning": "Supabase Storage が一時的なエラーを返したか（5xx、429、544）、接続できませんでした。",
        "clerk": "対応は不要です。自動で再試行されます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。ジョブは自動で再試行されます。多くのジョブで起きている場合は status.supabase.com を確認してください。「失敗」になったジョブは、原因が解消してから「再実行」を押してください（まとめてなら、「ジョブ」でこのエラーコードに絞り込んで「該当する失敗ジョブをすべて再実行…」）。"
      }
    },
    "time_budget": {
      "source": "worker",
      "en": {
        "meaning": "the invocation's time ran out mid-job; the next one resumes (bounded: see TIME_BUDGET_FREE_RELEASES)",
        "clerk": "Nothing to do: the next run goes on where this one stopped. If the job ends “Failed”, press “Retry”; if it fails again, call your system administrator.",
        "operator": "Nothing to do. If it keeps happening, the attachments are large or slow to download (“Attempts” says how long each took); a job that ended “Failed”: press “Retry”."
      },
      "ja": {
        "meaning": "実行時間の上限に達したため、ジョブを途中で中断しました。次の実行が続きから再開します。",
        "clerk": "対応は不要です。次の実行が続きから取り込みます。「失敗」になった場合は「再実行」を押し、また失敗したらシステム管理者に連絡してください。",
        "operator": "対応は不要です。繰り返し起きる場合は、添付ファイルが大きいかダウンロードが遅いためです（「試行」に所要時間があります）。「失敗」になったジョブは「再実行」を押してください。"
      }
    }
  },
  "outage": {
    "database_unauthorized": {
      "en": {
        "meaning": "the database (PostgREST) refused the server key (401/403: a JWT error, permission denied)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own."
      },
      "ja": {
        "meaning": "データベース（PostgREST）がサーバーキーを拒否したか、権限が足りません（401/403）。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
      }
    },
    "original_mismatch": {
      "en": {
        "meaning": "a stored original, read back from Storage, is not what was recorded when it was stored (it is missing, or its size or SHA-256 differs): the kept record of a received fax has changed",
        "clerk": "A stored fax may have been changed or removed. Delete nothing, and call your system administrator today, with the time shown.",
        "operator": "Run document-jobs-admin verify: it prints each fax (by its short id) whose stored original is missing or differs. For each, look at the object in Storage's dashboard (its size and last modified time) and in the project's logs (who wrote or deleted it, and when), then put the original back at the same key from the office's own copy (the export) and run document-jobs-admin verify again: the outage closes once every original reads as recorded. Record what happened under the office's rule."
      },
      "ja": {
        "meaning": "Storage から読み直した保存済みの原本が、保存したときの記録と一致しません（原本がない、またはサイズか SHA-256 が違います）。受信した FAX の保存記録が変わっています。",
        "clerk": "保存した FAX が変更または削除されたおそれがあります。何も削除せず、表示されている日時を添えて、今日中にシステム管理者に連絡してください。",
        "operator": "document-jobs-admin verify を実行してください。保存した原本がない、または一致しない FAX が短い ID とともに表示されます。それぞれについて、Storage のダッシュボードでそのオブジェクト（サイズと最終更新日時）を、プロジェクトのログで誰がいつ書き込みまたは削除したかを確認し、事務所の控え（エクスポート）から同じキーに原本を戻したうえで、もう一度 document-jobs-admin verify を実行してください。すべての原本が記録どおりに読めると、この障害は閉じます。経緯は事務処理規程に従って記録してください。"
      }
    },
    "queue_stalled": {
      "en": {
        "meaning": "no worker is taking the waiting jobs: the oldest claimable job waited longer than the threshold",
        "clerk": "Faxes are not being fetched now; the waiting ones come in on their own once it is fixed. Call your system administrator soon, with the code and the time shown.",
        "operator": "Check that the cron job document-jobs runs (select * from cron.job_run_details order by start_time desc limit 5), that Vault holds document_jobs_url and internal_function_secret, the worker's answers (select status_code, count(*) from net._http_response group by 1) and the worker's logs on Vercel."
      },
      "ja": {
        "meaning": "待機中のジョブを処理するワーカーがいません。最も古い待機ジョブが基準時間を超えて待っています。",
        "clerk": "FAX の取り込みが止まっています。直れば、待っている FAX は自動で取り込まれます。表示されているコードと開始時刻を添えて、早めにシステム管理者に連絡してください。",
        "operator": "cron ジョブ document-jobs が動いているか（select * from cron.job_run_details order by start_time desc limit 5）、Vault に document_jobs_url と internal_function_secret があるか、ワーカーの応答（select status_code, count(*) from net._http_response group by 1）と Vercel のワーカーのログを確認してください。"
      }
    },
    "reconciliation_stalled": {
      "en": {
        "meaning": "reconciliation, which records the e-mails whose webhook never came, has not listed Resend's received e-mails back to where its last run got: no run completed within three of its intervals, or a run has been under way for over an hour",
        "clerk": "The regular check that picks up faxes whose arrival notice was lost has stopped. Faxes still come in as usual while the notices work. Call your system administrator today, with the time shown.",
        "operator": "Run document-jobs-admin health: its reconciliation lines name the last run's finding or error. A refused key or a wrong URL is an outage of its own (resend_unauthorized, resend_misconfigured); an outage of Resend's shows on resend-status.com. Meanwhile a fax whose webhook fails is recorded by nothing: if webhooks_missing is open too, run document-jobs-admin reconcile --since with the time of the last complete run."
      },
      "ja": {
        "meaning": "Webhook が届かなかったメールを記録する照合（reconciliation）が、Resend の受信メールを前回の到達点まで確認できていません（3回分の間隔のうちに完了した実行がないか、1時間を超えて実行中です）。",
        "clerk": "到着の知らせが届かなかった FAX を拾う定期的な確認が止まっています。知らせが届いている間は、FAX は普段どおり届きます。表示されている時刻を添えて、今日中にシステム管理者に連絡してください。",
        "operator": "document-jobs-admin health を実行してください。照合の行に、前回の実行が止まった理由またはエラーが出ます。キーの拒否やURLの誤りはそれぞれ別の障害（resend_unauthorized、resend_misconfigured）として出ます。Resend 側の障害は resend-status.com で確認できます。その間、Webhook が届かなかったファクスを記録するものはありません。webhooks_missing も出ている場合は、最後に完了した実行の時刻を指定して document-jobs-admin reconcile --since を実行してください。"
      }
    },
    "reconciliation_unreadable": {
      "en": {
        "meaning": "Resend listed e-mails that reconciliation cannot read (no id, or a created_at that is not a time or is more than a day ahead): they are not recorded, and they may be faxes",
        "clerk": "A received e-mail could not be read and is not in the list: it may be a fax. Call your system administrator, with the time and sender shown.",
        "operator": "Look each one up in the Resend dashboard (Emails, Receiving) by what health and the overview show of it (id, time, sender, subject). If it is a fax, save its attachments from there or ask the sender to send it again. Report the listing to the developers: Resend's list did not have its documented shape."
      },
      "ja": {
        "meaning": "照合（reconciliation）が読み取れないメールを Resend が一覧に返しました（IDがない、または created_at が日時でないか1日以上先の日時）。これらは記録されていません。ファクスの可能性があります。",
        "clerk": "受信したメールを読み取れず、一覧に載っていないものがあります。FAX の可能性があります。表示されている日時と送信者を添えて、システム管理者に連絡してください。",
        "operator": "health と概要画面に表示される情報（ID、日時、送信者、件名）で、Resend のダッシュボード（Emails → Receiving）から1件ずつ探してください。ファクスであれば、そこから添付ファイルを保存するか、送信者に再送を依頼してください。Resend の一覧が仕様どおりの形ではなかったことを開発者に連絡してください。"
      }
    },
    "records_unguarded": {
      "en": {
        "meaning": "a guard that keeps the record of received faxes from being changed or deleted is not in place: a trigger of a record table is missing, disabled or altered, or a role was granted UPDATE, DELETE or TRUNCATE on one (only the tables' owner can do either)",
        "clerk": "Faxes still come in as usual. The protection of the stored faxes against changes is off: call your system administrator today.",
        "operator": "Run document-jobs-admin health: it names each guard that is not in place. Only the tables' owner (postgres: a migration, the SQL editor) can do this: find out who did and why (the database's logs in the Supabase dashboard). As postgres, select document_jobs_internal.guard_record_tables(); puts every guard back (it re-creates, re-enables and revokes). What changed while a guard was off cannot be told from the database: check the originals against their SHA-256 and record what happened under the office's rules."
      },
      "ja": {
        "meaning": "受信した FAX の記録を変更・削除から守る仕組みが外れています。記録のテーブルのトリガーがないか、無効にされたか、書き換えられたか、またはロールに UPDATE・DELETE・TRUNCATE の権限が与えられています（どちらもテーブルの所有者にしかできません）。",
        "clerk": "FAX は通常どおり届きます。保存した FAX を変更から守る仕組みが外れているため、今日中にシステム管理者に連絡してください。",
        "operator": "document-jobs-admin health を実行してください。外れている仕組みが1つずつ表示されます。これができるのはテーブルの所有者（postgres: マイグレーション、SQL Editor）だけなので、誰がなぜ行ったかを確認してください（Supabase のダッシュボードのデータベースのログ）。postgres で select document_jobs_internal.guard_record_tables(); を実行すると、すべての仕組みが元に戻ります（トリガーを作り直して有効にし、与えられた権限を外します）。外れていた間に変更されたものはデータベースからは分かりません。原本を記録した SHA-256 と照合し、事務処理規程に従って経緯を記録してください。"
      }
    },
    "resend_misconfigured": {
      "en": {
        "meaning": "RESEND_API_URL is not Resend's API: a redirect, 405, or a 404 for the endpoint itself",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Unset RESEND_API_URL on Vercel (the default is https://api.resend.com) and redeploy: the waiting jobs are tried again every 10 minutes."
      },
      "ja": {
        "meaning": "RESEND_API_URL が Resend の API を指していません（リダイレクト、405、またはエンドポイント自体の404）。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の RESEND_API_URL を削除して（既定値は https://api.resend.com）再デプロイしてください。待機中のジョブは10分ごとに再試行されます。"
      }
    },
    "resend_quota_exceeded": {
      "en": {
        "meaning": "Resend's daily or monthly quota is used up",
        "clerk": "Faxes wait until the e-mail service's plan allows more, and come in on their own then. Tell whoever manages the e-mail service's plan (Resend) soon.",
        "operator": "Raise the plan in the Resend dashboard (Billing), or wait for the quota to reset: the waiting jobs are tried again every hour."
      },
      "ja": {
        "meaning": "Resend の1日または1か月の利用上限に達しました。",
        "clerk": "受信サービスの契約の上限に達したため、FAX の取り込みを待っています。上限が解除されれば自動で取り込まれます。受信サービス（Resend）の契約を管理している方に早めに連絡してください。",
        "operator": "Resend のダッシュボード（Billing）でプランを上げるか、上限のリセットを待ってください。待機中のジョブは1時間ごとに再試行されます。"
      }
    },
    "resend_unauthorized": {
      "en": {
        "meaning": "RESEND_API_KEY is missing, deleted, invalid or lacks receiving permission (400 validation_error naming the API key, 401, 403)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Create a full-access key in the Resend dashboard (API Keys), set it as RESEND_API_KEY on Vercel and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own."
      },
      "ja": {
        "meaning": "Resend が API キー（RESEND_API_KEY）を拒否しました。未設定・削除済み・誤り、または受信の権限がない（送信専用の）キーです。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Resend のダッシュボード（API Keys）でフルアクセスのキーを作成し、Vercel の RESEND_API_KEY に設定して再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
      }
    },
    "retention_window_closing": {
      "en": {
        "meaning": "reconciliation has not listed Resend's received e-mails for more than half (then three quarters) of the time Resend keeps them (the setting retention): an e-mail of that gap whose webhook never came is lost once Resend deletes it",
        "clerk": "Faxes whose arrival notice was lost may soon be lost for good. Call your system administrator now, with the date shown.",
        "operator": "Before the date the alert names, run the command it names (document-jobs-admin reconcile --since ...; health prints it too), then find why the scheduled reconciliation does not keep up (reconciliation_stalled)."
      },
      "ja": {
        "meaning": "照合（reconciliation）が、Resend の受信メールを保存期間（設定 retention）の半分（その後は4分の3）を超えて確認できていません。この間に受信し Webhook が届かなかったメールは、Resend が削除すると失われます。",
        "clerk": "到着の知らせが届かなかった FAX が、まもなく取り出せなくなるおそれがあります。表示されている日時を添えて、すぐにシステム管理者に連絡してください。",
        "operator": "通知に書かれた日時より前に、通知に書かれたコマンド（document-jobs-admin reconcile --since ...。health にも表示されます）を実行してください。そのうえで、定期的な照合が追いつかない原因を確認してください（reconciliation_stalled）。"
      }
    },
    "storage_bucket_not_found": {
      "en": {
        "meaning": "Storage has no bucket of that name (404 Bucket not found, NoSuchBucket, InvalidBucketName)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Fix or unset ATTACHMENTS_BUCKET on Vercel (the migrations create fax-attachments, the default) and redeploy, or create the bucket: the waiting jobs are tried again every 10 minutes."
      },
      "ja": {
        "meaning": "Supabase Storage に ATTACHMENTS_BUCKET の名前のバケットがありません。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の ATTACHMENTS_BUCKET を直すか削除して（マイグレーションが既定の fax-attachments を作成します）再デプロイするか、バケットを作成してください。待機中のジョブは10分ごとに再試行されます。"
      }
    },
    "storage_unauthorized": {
      "en": {
        "meaning": "Storage refused the server key (401/403: InvalidJWT, AccessDenied)",
        "clerk": "Faxes are not being fetched because of a setting; they come in on their own once it is fixed. Call your system administrator soon.",
        "operator": "Set SUPABASE_SECRET_KEY on Vercel to a secret key of this project (Project Settings, API Keys; or the legacy service_role key in SUPABASE_SERVICE_ROLE_KEY), not the publishable one, and redeploy: the waiting jobs are tried again every 10 minutes and drain on their own."
      },
      "ja": {
        "meaning": "Supabase Storage がサーバーキーを拒否しました（401/403: InvalidJWT、AccessDenied）。",
        "clerk": "設定の問題で、FAX の取り込みが止まっています。直れば自動で取り込まれます。早めにシステム管理者に連絡してください。",
        "operator": "Vercel の SUPABASE_SECRET_KEY に、このプロジェクトのシークレットキー（Project Settings → API Keys。旧方式なら SUPABASE_SERVICE_ROLE_KEY に service_role キー）を設定し（公開用の publishable キーではなく）、再デプロイしてください。待機中のジョブは10分ごとに再試行され、自然に処理されます。"
      }
    },
    "webhooks_missing": {
      "en": {
        "meaning": "reconciliation recorded e-mails that Resend received and whose webhook never reached us: every new fax now waits for the next reconciliation run, and nothing else records them (if reconciliation stalls too, a fax is lost once Resend stops keeping it)",
        "clerk": "The notices that a fax arrived are not coming: faxes are picked up by a regular check instead, and show in the list later than usual. Call your system administrator today.",
        "operator": "Check the webhook in Resend's dashboard (Webhooks: its URL must be https://YOUR-APP.vercel.app/api/webhooks/resend and its deliveries answered 200; a 401 invalid_signature means its signing secret differs from RESEND_WEBHOOK_SECRET on Vercel: set the same value and redeploy), and Vercel's Deployment Protection, which answers 401 before the function runs (docs/DEPLOY.md)."
      },
      "ja": {
        "meaning": "Resend が受信したのに Webhook が届かなかったメールを、照合（reconciliation）が記録しました。新しいファクスは次の照合まで待ち、照合のほかに記録する仕組みはありません（照合も止まると、Resend の保存期間が過ぎたファクスは失われます）。",
        "clerk": "FAX の到着の知らせが届いていません。FAX は定期的な確認で取り込まれますが、一覧に出るまで普段より時間がかかります。今日中にシステム管理者に連絡してください。",
        "operator": "Resend のダッシュボードで Webhook を確認してください（Webhooks: URLが https://YOUR-APP.vercel.app/api/webhooks/resend で、配信が200で応答されていること。401 invalid_signature なら署名シークレットが Vercel の RESEND_WEBHOOK_SECRET と違うので、同じ値を設定して再デプロイ）。また、関数の実行前に401を返す Vercel の Deployment Protection も確認してください（docs/DEPLOY.md）。"
      }
    },
    "worker_failing": {
      "en": {
        "meaning": "the worker's calls fail (5xx, or no answer)",
        "clerk": "Faxes are not being fetched now; the waiting ones come in on their own once it is fixed. Call your system administrator soon, with the code and the time shown.",
        "operator": "Likely cause: the worker is failing (500: a setting is missing, see its logs; 503: it cannot reach the database, or the database refuses its key, stopped_because database_unauthorized: check SUPABASE_SECRET_KEY; 504 or a timeout: it ran past maxDuration). Check (select status_code, content from net._http_response order by created desc limit 5) and the worker's logs on Vercel."
      },
      "ja": {
        "meaning": "ワーカーの呼び出しが失敗しています（5xx、または応答なし）。",
        "clerk": "FAX の取り込みが止まっています。直れば、待っている FAX は自動で取り込まれます。表示されているコードと開始時刻を添えて、早めにシステム管理者に連絡してください。",
        "operator": "ワーカーが失敗している可能性が高いです（500: 設定の不足、ログを確認。503: データベースに接続できないか、キーを拒否されている（stopped_because database_unauthorized なら SUPABASE_SECRET_KEY を確認）。504 またはタイムアウト: maxDuration を超過）。(select status_code, content from net._http_response order by created desc limit 5) と Vercel のワーカーのログを確認してください。"
      }
    },
    "worker_not_found": {
      "en": {
        "meaning": "the worker's URL answers 404",
        "clerk": "Faxes are not being fetched now; the waiting ones come in on their own once it is fixed. Call your system administrator soon, with the code and the time shown.",
        "operator": "Likely cause: the Vault secret document_jobs_url is wrong (it must be https://YOUR-APP.vercel.app/api/internal/document-jobs) or the deployment is gone. Check the URL in Vault and the deployment on Vercel."
      },
      "ja": {
        "meaning": "ワーカーのURLが404を返しています。",
        "clerk": "FAX の取り込みが止まっています。直れば、待っている FAX は自動で取り込まれます。表示されているコードと開始時刻を添えて、早めにシステム管理者に連絡してください。",
        "operator": "Vault のシークレット document_jobs_url が誤っている（https://YOUR-APP.vercel.app/api/internal/document-jobs でなければなりません）か、デプロイがなくなっている可能性が高いです。Vault のURLと Vercel のデプロイを確認してください。"
      }
    },
    "worker_unauthorized": {
      "en": {
        "meaning": "the worker refuses the database's calls (401)",
        "clerk": "Faxes are not being fetched now; the waiting ones come in on their own once it is fixed. Call your system administrator soon, with the code and the time shown.",
        "operator": "Likely cause: the Vault secret internal_function_secret differs from INTERNAL_FUNCTION_SECRET on Vercel (or that variable is unset: the worker's log then names it). Store the same value in both (README: Rotating INTERNAL_FUNCTION_SECRET)."
      },
      "ja": {
        "meaning": "ワーカーがデータベースからの呼び出しを拒否しています（401）。",
        "clerk": "FAX の取り込みが止まっています。直れば、待っている FAX は自動で取り込まれます。表示されているコードと開始時刻を添えて、早めにシステム管理者に連絡してください。",
        "operator": "Vault のシークレット internal_function_secret と Vercel の INTERNAL_FUNCTION_SECRET が違う（または未設定で、その場合はワーカーのログに名前が出ます）可能性が高いです。両方に同じ値を設定してください（README: Rotating INTERNAL_FUNCTION_SECRET）。"
      }
    }
  },
  "finding": {
    "original_differs": {
      "en": {
        "meaning": "an original was already in Storage at its key with other bytes than those Resend served for the same file: neither replaced the other, and both are kept and recorded, each a version of the attachment with its own SHA-256",
        "clerk": "One file of this fax is kept in two versions with different contents. Do not delete or replace either, and do not decide yourself which one is right: call your system administrator today with the fax's id.",
        "operator": "Nothing was overwritten. Download each version (document-jobs-admin download with the job id writes them all; the alert names their SHA-256), compare them with the fax in the Resend dashboard (Emails, Receiving) while Resend still keeps it, and record which one the office relies on, as its rule against improper correction and deletion asks. A worker that stopped between an upload and its record leaves such an object; if versions keep appearing, report it to the developers with the job id."
      },
      "ja": {
        "meaning": "Storage の同じ保存先に、Resend から取得した内容と異なる原本がすでにありました。どちらも上書きせず、それぞれの SHA-256 とともに添付ファイルの版として両方を保存・記録しています。",
        "clerk": "この FAX のファイルの1つが、内容の異なる2つの版で保存されています。どちらも削除・差し替えせず、どちらが正しいかを自分で判断しないでください。FAX の ID を添えて、今日中にシステム管理者に連絡してください。",
        "operator": "上書きされたものはありません。各版をダウンロードし（ジョブIDを指定した document-jobs-admin download ですべて書き出せます。各版の SHA-256 は通知に記載されています）、Resend に残っている間に Resend のダッシュボード（Emails → Receiving）の FAX と照合して、事務所がどちらに依拠するかを、訂正削除の防止に関する事務処理規程に従って記録してください。アップロードから記録までの間に止まったワーカーがこのような版を残すことがあります。繰り返し起きる場合は、ジョブIDを添えて開発者に連絡してください。"
      }
    }
  },
  "refusal": {
    "account_exists": {
      "en": {
        "meaning": "this e-mail address already has an account: it cannot be invited again",
        "clerk": "To let them in again, send them “Send a password reset e-mail”.",
        "operator": "To let them in again, send them “Send a password reset e-mail”; to change their role, use document-jobs-admin operators add EMAIL --role ROLE."
      },
      "ja": {
        "meaning": "このメールアドレスにはすでにアカウントがあります。もう一度招待することはできません。",
        "clerk": "入れるようにするには「パスワード再設定メールを送る」を送ってください。",
        "operator": "入れるようにするには「パスワード再設定メールを送る」を送ってください。役割を変えるには document-jobs-admin operators add EMAIL --role ROLE を使います。"
      }
    },
    "already_done": {
      "en": {
        "meaning": "someone marked this fax done after the faxes were counted",
        "clerk": "Nothing to do."
      },
      "ja": {
        "meaning": "数えた後に、ほかの人がこの FAX を対応済みにしました。",
        "clerk": "対応は不要です。"
      }
    },
    "another_job_of_the_same_email": {
      "en": {
        "meaning": "a newer job of the same e-mail was retried instead",
        "clerk": "Nothing to do."
      },
      "ja": {
        "meaning": "代わりに、同じメールのより新しいジョブを再実行しました。",
        "clerk": "対応は不要です。"
      }
    },
    "another_live_job": {
      "en": {
        "meaning": "another job for the same e-mail is queued or running",
        "clerk": "Let that job finish, or first press “Cancel job…” on its page."
      },
      "ja": {
        "meaning": "同じメールの別のジョブが待機中か実行中です。",
        "clerk": "そのジョブの完了を待つか、先にそのジョブの画面で「ジョブを取消…」を押してください。"
      }
    },
    "auth_refused": {
      "en": {
        "meaning": "Supabase Auth refused the request (its message says why)",
        "clerk": "Check the e-mail address and try again."
      },
      "ja": {
        "meaning": "Supabase Auth が要求を断りました（理由は Auth のメッセージにあります）。",
        "clerk": "メールアドレスを確認して、もう一度お試しください。"
      }
    },
    "auth_unavailable": {
      "en": {
        "meaning": "Supabase Auth could not be reached, or answered unexpectedly",
        "clerk": "Try again in a moment. If it persists, call your system administrator.",
        "operator": "Try again in a moment. If it persists, check status.supabase.com."
      },
      "ja": {
        "meaning": "Supabase Auth に接続できないか、予期しない応答でした。",
        "clerk": "少し待ってからもう一度お試しください。続く場合はシステム管理者に連絡してください。",
        "operator": "少し待ってからもう一度お試しください。続く場合は status.supabase.com を確認してください。"
      }
    },
    "bad_cursor": {
      "en": {
        "meaning": "the page position in the address is not one this list gave",
        "clerk": "Open the list from its first page."
      },
      "ja": {
        "meaning": "アドレスのページ位置が、この一覧が出したものではありません。",
        "clerk": "一覧を最初のページから開いてください。"
      }
    },
    "bad_request": {
      "en": {
        "meaning": "the request was not valid (the server's message says which part)",
        "clerk": "Correct the input (a filter, a reason, a date) and try again."
      },
      "ja": {
        "meaning": "要求が正しくありませんでした（サーバーのメッセージに該当箇所があります）。",
        "clerk": "入力（絞り込み条件、理由、日時）を直して、もう一度お試しください。"
      }
    },
    "bad_text": {
      "en": {
        "meaning": "the input holds a character no text may hold (U+0000, or a lone surrogate)",
        "clerk": "Remove the character (often from pasted text) and try again."
      },
      "ja": {
        "meaning": "入力に使えない文字（U+0000 または単独のサロゲート）が含まれています。",
        "clerk": "その文字（貼り付けた文字列によく含まれます）を取り除いて、もう一度お試しください。"
      }
    },
    "body_too_large": {
      "en": {
        "meaning": "the request's body is too large",
        "clerk": "Shorten the reason and try again."
      },
      "ja": {
        "meaning": "要求の本文が大きすぎます。",
        "clerk": "理由を短くして、もう一度お試しください。"
      }
    },
    "database_unavailable": {
      "en": {
        "meaning": "the database did not answer as expected",
        "clerk": "Try again in a moment. If it persists, call your system administrator.",
        "operator": "Try again in a moment. If it persists, check status.supabase.com and the function's logs on Vercel."
      },
      "ja": {
        "meaning": "データベースが想定どおりに応答しませんでした。",
        "clerk": "少し待ってからもう一度お試しください。続く場合はシステム管理者に連絡してください。",
        "operator": "少し待ってからもう一度お試しください。続く場合は status.supabase.com と Vercel の関数のログを確認してください。"
      }
    },
    "email_rate_limited": {
      "en": {
        "meaning": "Supabase Auth has sent as many e-mails as it may for now",
        "clerk": "Wait a minute and try again.",
        "operator": "Wait a minute and try again; if it persists, the project needs its own SMTP server (docs/DEPLOY.md: Auth's built-in sender allows only a few e-mails an hour)."
      },
      "ja": {
        "meaning": "Supabase Auth は、いまはこれ以上メールを送れません（送信回数の上限）。",
        "clerk": "1分ほど待ってから、もう一度お試しください。",
        "operator": "1分ほど待って、もう一度お試しください。続く場合は、プロジェクトに独自の SMTP サーバーを設定してください（docs/DEPLOY.md: Auth の組み込み送信は1時間に数通までです）。"
      }
    },
    "forbidden": {
      "en": {
        "meaning": "the database refused this for the server's key",
        "clerk": "Call your system administrator.",
        "operator": "Check SUPABASE_SECRET_KEY on Vercel (a secret key of this project, not the publishable one)."
      },
      "ja": {
        "meaning": "データベースがサーバーのキーに対してこの操作を拒否しました。",
        "clerk": "システム管理者に連絡してください。",
        "operator": "Vercel の SUPABASE_SECRET_KEY（公開用ではなく、このプロジェクトのシークレットキー）を確認してください。"
      }
    },
    "handling_changed": {
      "en": {
        "meaning": "someone marked this fax since it was shown: the screen now shows how it stands",
        "clerk": "Check who has it now; mark it again only if you still need to."
      },
      "ja": {
        "meaning": "表示した後に、ほかの人がこの FAX の対応状況を変更しました。現在の状況を表示しています。",
        "clerk": "現在の担当者を確認し、必要な場合だけもう一度記録してください。"
      }
    },
    "index_changed": {
      "en": {
        "meaning": "someone changed this fax's index since this page was opened",
        "clerk": "Reload the page, check the values now entered, and correct them again if needed."
      },
      "ja": {
        "meaning": "このページを開いた後に、別の人がこのFAXの帳簿の項目を変更しました。",
        "clerk": "ページを再読み込みして現在の値を確認し、必要ならもう一度訂正してください。"
      }
    },
    "internal_error": {
      "en": {
        "meaning": "the server failed unexpectedly",
        "clerk": "Reload the page; if it happens again, call your system administrator.",
        "operator": "Reload the page; if it happens again, report it to the developers. The function's logs on Vercel name the error."
      },
      "ja": {
        "meaning": "サーバーで予期しないエラーが起きました。",
        "clerk": "ページを再読み込みしてください。再発する場合はシステム管理者に連絡してください。",
        "operator": "ページを再読み込みしてください。再発する場合は開発者に連絡してください。 Vercel の関数のログにエラーが記録されています。"
      }
    },
    "invalid_content_length": {
      "en": {
        "meaning": "the request's Content-Length is not valid",
        "clerk": "Reload the page; if it happens again, call your system administrator.",
        "operator": "Reload the page; if it happens again, report it to the developers."
      },
      "ja": {
        "meaning": "要求の Content-Length が正しくありません。",
        "clerk": "ページを再読み込みしてください。再発する場合はシステム管理者に連絡してください。",
        "operator": "ページを再読み込みしてください。再発する場合は開発者に連絡してください。"
      }
    },
    "invalid_token": {
      "en": {
        "meaning": "the access token is not valid for this project",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "アクセストークンがこのプロジェクトで有効ではありません。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "job_deleted": {
      "en": {
        "meaning": "the job no longer exists",
        "clerk": "Nothing to do."
      },
      "ja": {
        "meaning": "このジョブはもう存在しません。",
        "clerk": "対応は不要です。"
      }
    },
    "jobs_live": {
      "en": {
        "meaning": "a job of this fax is waiting or running: it may still store a file, so the fax is not deleted now",
        "clerk": "Wait until its jobs have ended, then delete it again."
      },
      "ja": {
        "meaning": "この FAX のジョブが待機中か実行中です。まだファイルを保存する可能性があるため、いまは削除しません。",
        "clerk": "ジョブが終わるのを待ってから、もう一度削除してください。"
      }
    },
    "length_required": {
      "en": {
        "meaning": "the request did not say its body's length",
        "clerk": "Reload the page; if it happens again, call your system administrator.",
        "operator": "Reload the page; if it happens again, report it to the developers."
      },
      "ja": {
        "meaning": "要求が本文の長さを示していません。",
        "clerk": "ページを再読み込みしてください。再発する場合はシステム管理者に連絡してください。",
        "operator": "ページを再読み込みしてください。再発する場合は開発者に連絡してください。"
      }
    },
    "malformed_json": {
      "en": {
        "meaning": "the request's body is not a valid JSON object",
        "clerk": "Reload the page; if it happens again, call your system administrator.",
        "operator": "Reload the page; if it happens again, report it to the developers."
      },
      "ja": {
        "meaning": "要求の本文が正しい JSON オブジェクトではありません。",
        "clerk": "ページを再読み込みしてください。再発する場合はシステム管理者に連絡してください。",
        "operator": "ページを再読み込みしてください。再発する場合は開発者に連絡してください。"
      }
    },
    "method_not_allowed": {
      "en": {
        "meaning": "this address does not take that kind of request",
        "clerk": "Reload the page; if it happens again, call your system administrator.",
        "operator": "Reload the page; if it happens again, report it to the developers."
      },
      "ja": {
        "meaning": "このアドレスはその種類の要求を受け付けません。",
        "clerk": "ページを再読み込みしてください。再発する場合はシステム管理者に連絡してください。",
        "operator": "ページを再読み込みしてください。再発する場合は開発者に連絡してください。"
      }
    },
    "misconfigured": {
      "en": {
        "meaning": "the admin screen is not configured on the server",
        "clerk": "Call your system administrator.",
        "operator": "Check the settings on Vercel (SUPABASE_URL, the keys) and the function's logs."
      },
      "ja": {
        "meaning": "サーバーで管理画面が設定されていません。",
        "clerk": "システム管理者に連絡してください。",
        "operator": "Vercel の設定（SUPABASE_URL、キー）と関数のログを確認してください。"
      }
    },
    "missing_token": {
      "en": {
        "meaning": "the request carried no access token",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "要求にアクセストークンがありませんでした。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "no_account": {
      "en": {
        "meaning": "this e-mail address has no account",
        "clerk": "Check the address, or invite them with “Send the invitation”."
      },
      "ja": {
        "meaning": "このメールアドレスのアカウントはありません。",
        "clerk": "アドレスを確認するか、「招待メールを送る」で招待してください。"
      }
    },
    "no_role": {
      "en": {
        "meaning": "this account has no role on the admin screen",
        "clerk": "Ask an admin to add it.",
        "operator": "Add it with document-jobs-admin operators add."
      },
      "ja": {
        "meaning": "このアカウントには管理画面の役割がありません。",
        "clerk": "管理者に追加を依頼してください。",
        "operator": "document-jobs-admin operators add で追加してください。"
      }
    },
    "not_admin": {
      "en": {
        "meaning": "only an admin may do this; this account is a viewer or a clerk",
        "clerk": "Ask an admin to do it, or to make this account an admin."
      },
      "ja": {
        "meaning": "この操作は管理者だけができます。このアカウントは閲覧者または事務担当者です。",
        "clerk": "管理者に操作を依頼するか、このアカウントを管理者にするよう依頼してください。"
      }
    },
    "not_failed": {
      "en": {
        "meaning": "the job is not failed (any more): only a failed job can be retried",
        "clerk": "Refresh to see its state now."
      },
      "ja": {
        "meaning": "このジョブは（もう）失敗状態ではありません。再実行できるのは失敗したジョブだけです。",
        "clerk": "更新して現在の状態を確認してください。"
      }
    },
    "not_found": {
      "en": {
        "meaning": "it does not exist (any more)",
        "clerk": "Go back to the list and refresh it."
      },
      "ja": {
        "meaning": "見つかりません（削除された可能性があります）。",
        "clerk": "一覧に戻って更新してください。"
      }
    },
    "not_live": {
      "en": {
        "meaning": "the job is not queued or running (any more): only those can be cancelled",
        "clerk": "Refresh to see its state now."
      },
      "ja": {
        "meaning": "このジョブは（もう）待機中でも実行中でもありません。取り消せるのはそれらだけです。",
        "clerk": "更新して現在の状態を確認してください。"
      }
    },
    "read_only": {
      "en": {
        "meaning": "this account may only read: marking who is dealing with a fax and entering its index are for a clerk or an admin",
        "clerk": "Ask a clerk or an admin to do it, or ask an admin to give this account the clerk role.",
        "operator": "Give it the clerk role with document-jobs-admin operators add EMAIL --role clerk."
      },
      "ja": {
        "meaning": "このアカウントは閲覧のみです。FAX の対応状況の記録と帳簿の項目の入力は、事務担当者か管理者が行います。",
        "clerk": "事務担当者か管理者に依頼するか、このアカウントを事務担当者にするよう管理者に依頼してください。",
        "operator": "document-jobs-admin operators add EMAIL --role clerk で事務担当者にしてください。"
      }
    },
    "reason_required": {
      "en": {
        "meaning": "a value entered before is being changed: a correction needs its reason",
        "clerk": "Write why it is corrected in “Reason for the correction”, then press “Save” again."
      },
      "ja": {
        "meaning": "入力済みの値を変更しています。訂正には理由が必要です。",
        "clerk": "「訂正の理由」に訂正の理由を書いてから、もう一度「保存」を押してください。"
      }
    },
    "retention_not_over": {
      "en": {
        "meaning": "this fax must still be kept: its keep-until date has not passed (the law's period), so nothing may delete it",
        "clerk": "Nothing to do: keep it. It may be deleted once the keep-until date on its page has passed."
      },
      "ja": {
        "meaning": "この FAX はまだ保存しなければなりません。保存期限（法律の保存期間）を過ぎていないため、削除できません。",
        "clerk": "対応は不要です。保存してください。FAX の画面の保存期限を過ぎた後なら削除できます。"
      }
    },
    "session_ended": {
      "en": {
        "meaning": "the session has ended (signed out elsewhere, or the access was removed)",
        "clerk": "Sign in again; if that is refused, ask an admin for access."
      },
      "ja": {
        "meaning": "セッションが終了しました（別の場所でログアウトしたか、アクセス権が削除されました）。",
        "clerk": "もう一度ログインしてください。拒否される場合は、管理者にアクセス権を依頼してください。"
      }
    },
    "storage_unavailable": {
      "en": {
        "meaning": "Supabase Storage could not make the download link",
        "clerk": "Try again in a moment. If it persists, call your system administrator.",
        "operator": "Try again in a moment. If it persists, check status.supabase.com."
      },
      "ja": {
        "meaning": "Supabase Storage がダウンロードリンクを作成できませんでした。",
        "clerk": "少し待ってからもう一度お試しください。続く場合はシステム管理者に連絡してください。",
        "operator": "少し待ってからもう一度お試しください。続く場合は status.supabase.com を確認してください。"
      }
    },
    "token_expired": {
      "en": {
        "meaning": "the access token expired",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "アクセストークンの有効期限が切れました。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "unchanged": {
      "en": {
        "meaning": "the fax already stood so: nothing was changed",
        "clerk": "Nothing to do."
      },
      "ja": {
        "meaning": "FAX はすでにその状況でした。何も変更していません。",
        "clerk": "対応は不要です。"
      }
    }
  },
  "auth": {
    "bad_jwt": {
      "en": {
        "meaning": "the access token is not valid",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "アクセストークンが正しくありません。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "email_address_invalid": {
      "en": {
        "meaning": "the e-mail address is not valid",
        "clerk": "Check the e-mail address."
      },
      "ja": {
        "meaning": "メールアドレスが正しくありません。",
        "clerk": "メールアドレスを確認してください。"
      }
    },
    "email_not_confirmed": {
      "en": {
        "meaning": "this e-mail address is not confirmed yet",
        "clerk": "Confirm it with the link Supabase sent, or ask an admin to add the account again."
      },
      "ja": {
        "meaning": "このメールアドレスはまだ確認されていません。",
        "clerk": "Supabase から届いたリンクで確認するか、管理者にアカウントの再追加を依頼してください。"
      }
    },
    "email_provider_disabled": {
      "en": {
        "meaning": "sign-in with e-mail and password is turned off for this project",
        "clerk": "Call your system administrator.",
        "operator": "Turn on the Email provider in Supabase (Authentication, Sign In / Providers)."
      },
      "ja": {
        "meaning": "このプロジェクトではメールとパスワードでのログインが無効です。",
        "clerk": "システム管理者に連絡してください。",
        "operator": "Supabase の Authentication → Sign In / Providers で Email を有効にしてください。"
      }
    },
    "invalid_credentials": {
      "en": {
        "meaning": "the e-mail address or the password is wrong",
        "clerk": "Check both and try again; if you forgot the password, press “Forgot your password?” and set a new one with the link that is e-mailed to you.",
        "operator": "Check both and try again; “Forgot your password?” e-mails a link to set a new one (an admin can send it too: document-jobs-admin operators reset-password)."
      },
      "ja": {
        "meaning": "メールアドレスまたはパスワードが違います。",
        "clerk": "両方を確認して、もう一度お試しください。パスワードを忘れた場合は、「パスワードをお忘れですか」を押し、メールで届くリンクから新しいパスワードを設定してください。",
        "operator": "両方を確認して、もう一度お試しください。「パスワードをお忘れですか」から新しいパスワードを設定するリンクがメールで届きます（管理者も送れます: document-jobs-admin operators reset-password）。"
      }
    },
    "no_authorization": {
      "en": {
        "meaning": "the request carried no access token",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "要求にアクセストークンがありませんでした。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "otp_expired": {
      "en": {
        "meaning": "the e-mailed link is not valid any more (used already, or more than a day old)",
        "clerk": "Ask for a new e-mail with “Forgot your password?”, and use the newest link."
      },
      "ja": {
        "meaning": "メールのリンクは使えなくなっています（使用済みか、1日以上前のものです）。",
        "clerk": "「パスワードをお忘れですか」からもう一度メールを送り、いちばん新しいリンクを使ってください。"
      }
    },
    "over_email_send_rate_limit": {
      "en": {
        "meaning": "Supabase Auth has sent as many e-mails as it may for now",
        "clerk": "Wait a minute, check your inbox (and its spam folder), then try again.",
        "operator": "Wait a minute and try again; if it persists, the project needs its own SMTP server (docs/DEPLOY.md: Auth's built-in sender allows only a few e-mails an hour)."
      },
      "ja": {
        "meaning": "Supabase Auth は、いまはこれ以上メールを送れません（送信回数の上限）。",
        "clerk": "1分ほど待ち、受信トレイ（迷惑メールのフォルダも）を確認してから、もう一度お試しください。",
        "operator": "1分ほど待って、もう一度お試しください。続く場合は、プロジェクトに独自の SMTP サーバーを設定してください（docs/DEPLOY.md: Auth の組み込み送信は1時間に数通までです）。"
      }
    },
    "over_request_rate_limit": {
      "en": {
        "meaning": "too many attempts from here",
        "clerk": "Wait a few minutes and try again."
      },
      "ja": {
        "meaning": "試行が多すぎます。",
        "clerk": "数分待ってから、もう一度お試しください。"
      }
    },
    "refresh_token_already_used": {
      "en": {
        "meaning": "the session was renewed elsewhere and ended here",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "セッションが別の場所で更新され、ここでは終了しました。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "refresh_token_not_found": {
      "en": {
        "meaning": "the session could not be renewed",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "セッションを更新できませんでした。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "request_timeout": {
      "en": {
        "meaning": "Supabase Auth took too long to answer",
        "clerk": "Try again in a moment."
      },
      "ja": {
        "meaning": "Supabase Auth の応答に時間がかかりすぎました。",
        "clerk": "少し待ってからもう一度お試しください。"
      }
    },
    "same_password": {
      "en": {
        "meaning": "the new password is the one the account already has",
        "clerk": "Choose a different password."
      },
      "ja": {
        "meaning": "新しいパスワードが、いまのパスワードと同じです。",
        "clerk": "別のパスワードにしてください。"
      }
    },
    "session_expired": {
      "en": {
        "meaning": "the session expired",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "セッションの有効期限が切れました。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "session_not_found": {
      "en": {
        "meaning": "the session has ended",
        "clerk": "Sign in again."
      },
      "ja": {
        "meaning": "セッションが終了しました。",
        "clerk": "もう一度ログインしてください。"
      }
    },
    "unexpected_failure": {
      "en": {
        "meaning": "Supabase Auth failed unexpectedly",
        "clerk": "Try again in a moment. If it persists, call your system administrator.",
        "operator": "Try again in a moment. If it persists, check status.supabase.com."
      },
      "ja": {
        "meaning": "Supabase Auth で予期しないエラーが起きました。",
        "clerk": "少し待ってからもう一度お試しください。続く場合はシステム管理者に連絡してください。",
        "operator": "少し待ってからもう一度お試しください。続く場合は status.supabase.com を確認してください。"
      }
    },
    "user_banned": {
      "en": {
        "meaning": "this account is blocked",
        "clerk": "Ask an admin."
      },
      "ja": {
        "meaning": "このアカウントは停止されています。",
        "clerk": "管理者に問い合わせてください。"
      }
    },
    "user_not_found": {
      "en": {
        "meaning": "this account does not exist (any more)",
        "clerk": "Ask an admin for access."
      },
      "ja": {
        "meaning": "このアカウントは存在しません（削除された可能性があります）。",
        "clerk": "管理者にアクセス権を依頼してください。"
      }
    },
    "validation_failed": {
      "en": {
        "meaning": "the e-mail address or the password is missing or not valid",
        "clerk": "Enter an e-mail address and a password."
      },
      "ja": {
        "meaning": "メールアドレスまたはパスワードが空か、正しい形式ではありません。",
        "clerk": "メールアドレスとパスワードを入力してください。"
      }
    },
    "weak_password": {
      "en": {
        "meaning": "the new password is too short or too weak for this project",
        "clerk": "Choose a longer password (at least the length Supabase Auth's message gives)."
      },
      "ja": {
        "meaning": "新しいパスワードが短すぎるか、このプロジェクトの条件を満たしていません。",
        "clerk": "もっと長いパスワードにしてください（Supabase Auth のメッセージにある文字数以上）。"
      }
    }
  }
};
