use std::io::Read;
use std::io::Result as IoResult;
use std::sync::mpsc::channel;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

/// trac patch: closes the connection a body belongs to (shuts its socket down).
pub type Closer = Arc<dyn Fn() + Send + Sync>;

/// trac patch: the most bytes of an unread body that are drained (read and thrown away) when
/// the body's reader is dropped; a longer rest closes the connection instead.
pub const DRAIN_LIMIT: usize = 1 << 20;

/// trac patch: the buffer the rest of a body is drained with.
const DRAIN_BUFFER: usize = 8 << 10;

/// A `Reader` that reads exactly the number of bytes from a sub-reader.
///
/// If the limit is reached, it returns EOF. If the limit is not reached
/// when the destructor is called, the remaining bytes will be read and
/// thrown away.
pub struct EqualReader<R>
where
    R: Read,
{
    reader: R,
    size: usize,
    last_read_signal: Sender<IoResult<()>>,
    closer: Option<Closer>,
}

impl<R> EqualReader<R>
where
    R: Read,
{
    pub fn new(reader: R, size: usize) -> (EqualReader<R>, Receiver<IoResult<()>>) {
        Self::with_closer(reader, size, None)
    }

    /// trac patch: as `new`, with what closes the connection when the unread rest of the body
    /// is over `DRAIN_LIMIT` at drop.
    pub fn with_closer(
        reader: R,
        size: usize,
        closer: Option<Closer>,
    ) -> (EqualReader<R>, Receiver<IoResult<()>>) {
        let (tx, rx) = channel();

        let r = EqualReader {
            reader,
            size,
            last_read_signal: tx,
            closer,
        };

        (r, rx)
    }
}

impl<R> Read for EqualReader<R>
where
    R: Read,
{
    fn read(&mut self, buf: &mut [u8]) -> IoResult<usize> {
        if self.size == 0 {
            return Ok(0);
        }

        let buf = if buf.len() < self.size {
            buf
        } else {
            &mut buf[..self.size]
        };

        match self.reader.read(buf) {
            Ok(len) => {
                self.size -= len;
                Ok(len)
            }
            err @ Err(_) => err,
        }
    }
}

impl<R> Drop for EqualReader<R>
where
    R: Read,
{
    // trac patch: the unread rest of the body is drained with a fixed buffer, and only up to
    // `DRAIN_LIMIT` bytes; a longer rest is not drained: the connection is closed (`closer`)
    // so that the next request cannot start inside the body. (0.12.0 allocated a buffer of the
    // whole rest, `vec![0; remaining]`: a huge declared `Content-Length` aborted the process.)
    fn drop(&mut self) {
        if self.size > DRAIN_LIMIT {
            if let Some(close) = self.closer.take() {
                close();
            }
            self.last_read_signal.send(Ok(())).ok();
            return;
        }
        let mut remaining_to_read = self.size;
        let mut buf = [0u8; DRAIN_BUFFER];

        while remaining_to_read > 0 {
            let n = remaining_to_read.min(DRAIN_BUFFER);
            match self.reader.read(&mut buf[..n]) {
                Err(e) => {
                    self.last_read_signal.send(Err(e)).ok();
                    break;
                }
                Ok(0) => {
                    self.last_read_signal.send(Ok(())).ok();
                    break;
                }
                Ok(other) => {
                    remaining_to_read -= other;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EqualReader;
    use std::io::Read;

    #[test]
    fn test_limit() {
        use std::io::Cursor;

        let mut org_reader = Cursor::new("hello world".to_string().into_bytes());

        {
            let (mut equal_reader, _) = EqualReader::new(org_reader.by_ref(), 5);

            let mut string = String::new();
            equal_reader.read_to_string(&mut string).unwrap();
            assert_eq!(string, "hello");
        }

        let mut string = String::new();
        org_reader.read_to_string(&mut string).unwrap();
        assert_eq!(string, " world");
    }

    #[test]
    fn test_not_enough() {
        use std::io::Cursor;

        let mut org_reader = Cursor::new("hello world".to_string().into_bytes());

        {
            let (mut equal_reader, _) = EqualReader::new(org_reader.by_ref(), 5);

            let mut vec = [0];
            equal_reader.read_exact(&mut vec).unwrap();
            assert_eq!(vec[0], b'h');
        }

        let mut string = String::new();
        org_reader.read_to_string(&mut string).unwrap();
        assert_eq!(string, " world");
    }

    #[test]
    fn drains_a_long_rest_with_a_small_buffer() {
        use std::io::Cursor;

        let body = vec![7u8; super::DRAIN_LIMIT];
        let mut org_reader = Cursor::new([body, b"next".to_vec()].concat());
        {
            let _ = EqualReader::new(org_reader.by_ref(), super::DRAIN_LIMIT);
        }
        let mut string = String::new();
        org_reader.read_to_string(&mut string).unwrap();
        assert_eq!(string, "next");
    }

    #[test]
    fn a_rest_over_the_limit_closes_instead_of_draining() {
        use std::io::Cursor;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;

        let closed = Arc::new(AtomicBool::new(false));
        let c = closed.clone();
        let closer: super::Closer = Arc::new(move || c.store(true, Ordering::SeqCst));
        let mut org_reader = Cursor::new(b"hello".to_vec());
        {
            // a declared length that could never be allocated
            let _ = EqualReader::with_closer(org_reader.by_ref(), usize::MAX / 2, Some(closer));
        }
        assert!(closed.load(Ordering::SeqCst));
        let mut string = String::new();
        org_reader.read_to_string(&mut string).unwrap();
        assert_eq!(string, "hello");
    }
}
