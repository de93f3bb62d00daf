//! A small blocking HTTP/1.1 client for the server's own tests and load benchmark:
//! keep-alive connections, `Content-Length` and chunked answers, optional TLS (rustls)
//! with a client certificate or a bearer token. Not a general-purpose client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// An answer.
#[derive(Clone, Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header of that (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// The body as JSON.
    pub fn json(&self) -> Result<serde_json::Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| format!("answer is not JSON ({e}): {}", self.text()))
    }
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// A connection to the server (reconnects when the server closed it).
pub struct Client {
    addr: SocketAddr,
    tls: Option<(Arc<rustls::ClientConfig>, rustls::pki_types::ServerName<'static>)>,
    token: Option<String>,
    timeout: Duration,
    conn: Option<BufReader<Box<dyn Stream>>>,
}

impl Client {
    /// Plain HTTP to `addr`.
    pub fn new(addr: SocketAddr) -> Client {
        Client { addr, tls: None, token: None, timeout: Duration::from_secs(300), conn: None }
    }
    /// HTTPS with this client configuration, checking the server's name `server_name`.
    pub fn with_tls(mut self, config: Arc<rustls::ClientConfig>, server_name: &str) -> Result<Client, String> {
        let name = rustls::pki_types::ServerName::try_from(server_name.to_string()).map_err(|e| e.to_string())?;
        self.tls = Some((config, name));
        Ok(self)
    }
    /// Sends `Authorization: Bearer TOKEN`.
    pub fn with_token(mut self, token: &str) -> Client {
        self.token = Some(token.to_string());
        self
    }
    /// Read and write timeout of the socket.
    pub fn with_timeout(mut self, t: Duration) -> Client {
        self.timeout = t;
        self
    }

    fn connect(&self) -> std::io::Result<BufReader<Box<dyn Stream>>> {
        let tcp = TcpStream::connect_timeout(&self.addr, Duration::from_secs(10))?;
        tcp.set_read_timeout(Some(self.timeout))?;
        tcp.set_write_timeout(Some(self.timeout))?;
        tcp.set_nodelay(true)?;
        let s: Box<dyn Stream> = match &self.tls {
            None => Box::new(tcp),
            Some((cfg, name)) => {
                let conn = rustls::ClientConnection::new(cfg.clone(), name.clone()).map_err(std::io::Error::other)?;
                Box::new(rustls::StreamOwned::new(conn, tcp))
            }
        };
        Ok(BufReader::new(s))
    }

    /// Sends one request and reads the answer; retries once on a fresh connection when a
    /// kept-alive one turns out closed.
    pub fn request(&mut self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> std::io::Result<Response> {
        let reused = self.conn.is_some();
        match self.try_request(method, path, content_type, body) {
            Err(e) if reused && is_closed(&e) => {
                self.conn = None;
                self.try_request(method, path, content_type, body)
            }
            r => r,
        }
    }

    fn try_request(&mut self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> std::io::Result<Response> {
        if self.conn.is_none() {
            self.conn = Some(self.connect()?);
        }
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", self.addr, body.len());
        if let Some(ct) = content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        if let Some(t) = &self.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        head.push_str("\r\n");
        let conn = self.conn.as_mut().expect("connected above");
        let r = (|| {
            let w = conn.get_mut();
            w.write_all(head.as_bytes())?;
            w.write_all(body)?;
            w.flush()?;
            read_response(conn)
        })();
        match &r {
            Ok(resp) if resp.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close")) => self.conn = None,
            Err(_) => self.conn = None,
            _ => {}
        }
        r
    }

    /// `GET path`.
    pub fn get(&mut self, path: &str) -> std::io::Result<Response> {
        self.request("GET", path, None, b"")
    }
    /// `POST path` with a JSON body.
    pub fn post_json(&mut self, path: &str, body: &[u8]) -> std::io::Result<Response> {
        self.request("POST", path, Some("application/json"), body)
    }
}

fn is_closed(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe)
}

fn bad(m: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string())
}

/// Reads one HTTP/1.1 response.
pub fn read_response<R: BufRead>(r: &mut R) -> std::io::Result<Response> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"));
    }
    let status: u16 = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| bad("bad status line"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').ok_or_else(|| bad("bad header"))?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16).map_err(|_| bad("bad chunk size"))?;
            if size == 0 {
                line.clear();
                r.read_line(&mut line)?;
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])?;
            line.clear();
            r.read_line(&mut line)?;
        }
    } else if let Some(len) = get("content-length") {
        let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        body.resize(len, 0);
        r.read_exact(&mut body)?;
    }
    Ok(Response { status, headers, body })
}
