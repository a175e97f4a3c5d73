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

/// `url` with the password of a `scheme://user:password@host` form replaced by `***`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return format!("`{url}`") };
    match rest.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or("");
            format!("`{scheme}://{name}:***@{host}`")
        }
        _ => format!("`{url}`"),
    }
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
}
