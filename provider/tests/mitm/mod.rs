//! A man in the middle for TLS 1.3 on loopback: it relays one connection at
//! a time between two real OpenSSL peers and rewrites the key shares of the
//! ClientHello and the ServerHello ([`proxy`]), in the ways [`tamper`]
//! lists, over the wire structures of [`wire`].

pub mod proxy;
pub mod tamper;
pub mod wire;
