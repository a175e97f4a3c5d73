//! The connection URL, checked before a run.

/// Checks that `url` is a PostgreSQL connection string tokio-postgres can read
/// (`postgresql://user@host:port/db` or `host=... user=...`), without connecting.
///
/// # Errors
/// One line naming the URL (its password hidden) and what is wrong with it.
pub fn check_url(url: &str) -> Result<(), String> {
    url.parse::<tokio_postgres::Config>().map(drop).map_err(|e| {
        format!(
            "{} is not a PostgreSQL connection URL ({e}); expected postgresql://USER@HOST:PORT/DATABASE",
            redact(url)
        )
    })
}

/// Connects once to `url` (at most `timeout`, on a runtime of its own) and disconnects:
/// says, before a run, that the server can be reached and lets this user in. Blocking.
///
/// # Errors
/// One line naming the URL (its password hidden) and the connection error with its causes
/// (`error connecting to server: Connection refused (os error 111)`, an authentication
/// error, a timeout, ...).
pub fn check_reachable(url: &str, timeout: std::time::Duration) -> Result<(), String> {
    check_url(url)?;
    let cannot = |why: String| format!("cannot connect to {} ({why})", redact(url));
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| cannot(checkpoint_contract::error_chain(&e)))?;
    config.connect_timeout(timeout);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| cannot(format!("no runtime: {e}")))?;
    runtime.block_on(async {
        match tokio::time::timeout(timeout, config.connect(tokio_postgres::NoTls)).await {
            Ok(Ok((client, connection))) => {
                drop(client);
                let _ = connection.await;
                Ok(())
            }
            Ok(Err(e)) => Err(cannot(checkpoint_contract::error_chain(&e))),
            Err(_) => Err(cannot(format!("no answer within {} s", timeout.as_secs_f64()))),
        }
    })
}

/// `url` in backquotes with every password replaced by `***`: the one of a
/// `scheme://user:password@host` form, and the value of every `password=` key, in a URL's
/// query (`?user=u&password=p`) or in the `key=value` form (`password=p`,
/// `password='p q'`).
fn redact(url: &str) -> String {
    let mut out = match url.split_once("://") {
        Some((scheme, rest)) => {
            // The authority ends at the first '/', '?' or '#'; its userinfo at its last '@'.
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(end);
            match authority.rsplit_once('@') {
                Some((user, host)) if user.contains(':') => {
                    let name = user.split(':').next().unwrap_or("");
                    format!("{scheme}://{name}:***@{host}{tail}")
                }
                _ => url.to_owned(),
            }
        }
        None => url.to_owned(),
    };
    let mut from = 0;
    while let Some(at) = out[from..].to_ascii_lowercase().find("password=").map(|i| from + i) {
        let starts_key = at == 0 || matches!(out.as_bytes()[at - 1], b'?' | b'&' | b' ' | b'\t');
        let value = at + "password=".len();
        if !starts_key {
            from = value;
            continue;
        }
        let rest = &out[value..];
        let len = if let Some(quoted) = rest.strip_prefix('\'') {
            quoted.find('\'').map_or(rest.len(), |i| i + 2)
        } else {
            rest.find(['&', ' ', '\t', '#']).unwrap_or(rest.len())
        };
        out.replace_range(value..value + len, "***");
        from = value + 3;
    }
    format!("`{out}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_passwords_hidden() {
        assert!(check_url("postgresql://postgres@127.0.0.1:5432/postgres").is_ok());
        assert!(check_url("host=localhost user=postgres").is_ok());
        let e = check_url("postgresql://u:secret@127.0.0.1:notaport/db").unwrap_err();
        assert!(e.contains("u:***@") && !e.contains("secret"), "{e}");
        assert!(check_url("not a url at all").is_err());
    }

    #[test]
    fn every_form_of_password_is_hidden() {
        for (url, shown) in [
            ("postgres://u:s3cr%40t@h:1/db", "`postgres://u:***@h:1/db`"),
            ("postgres://127.0.0.1:1/x?user=u&password=hunter3", "`postgres://127.0.0.1:1/x?user=u&password=***`"),
            ("postgres://h/x?password=hunter3&user=u", "`postgres://h/x?password=***&user=u`"),
            ("host=127.0.0.1 port=1 user=u password=hunter2", "`host=127.0.0.1 port=1 user=u password=***`"),
            ("host=h password='two words' user=u", "`host=h password=*** user=u`"),
            ("host=h PASSWORD=x", "`host=h PASSWORD=***`"),
            ("host=h mypassword=kept", "`host=h mypassword=kept`"),
            ("postgres://u@h/db", "`postgres://u@h/db`"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
        }
        let e = check_reachable("host=127.0.0.1 port=1 user=u password=hunter2", std::time::Duration::from_secs(5))
            .unwrap_err();
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn an_unreachable_server_is_one_line_naming_the_url_and_the_cause() {
        let e = check_reachable("postgresql://u:secret@127.0.0.1:1/db", std::time::Duration::from_secs(5)).unwrap_err();
        assert!(e.starts_with("cannot connect to `postgresql://u:***@127.0.0.1:1/db` (error connecting"), "{e}");
        assert!(e.contains("refused") && !e.contains("secret") && !e.contains('\n'), "{e}");
    }
}
