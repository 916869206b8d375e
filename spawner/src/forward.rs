//! How a rank's output is cut into the pieces the launcher writes whole, so
//! lines of different ranks never interleave mid-line (sans-IO: bytes in,
//! pieces out).
//!
//! A piece ends at a newline, or at a carriage return (a progress line
//! redrawn in place reaches the user as it is drawn, not when the rank
//! ends; a carriage return followed by its newline in the same read, as
//! ssh ends its messages, stays one piece, so no other line lands between
//! the two), or after [`MAX_PIECE`] bytes of a longer line (the launcher's
//! memory stays bounded when a rank writes without newlines). Each piece
//! starts with the rank's tag (`[rank] ` under `-v`) when there is one. At
//! the end a last line without a newline gets one, so it cannot run into
//! another rank's line.

/// The longest piece held back waiting for its newline.
pub(crate) const MAX_PIECE: usize = 64 * 1024;

/// Cuts one stream of a rank's output into pieces.
#[derive(Debug)]
pub(crate) struct Splitter {
    tag: Vec<u8>,
    /// The piece being gathered (the tag first, when there is one).
    piece: Vec<u8>,
}

impl Splitter {
    /// A splitter whose pieces start with `tag` (empty: none).
    pub(crate) fn new(tag: &[u8]) -> Self {
        Splitter {
            tag: tag.to_vec(),
            piece: Vec::new(),
        }
    }

    /// Take `data`, the stream's next bytes; `out` gets every piece that is
    /// complete.
    pub(crate) fn push(&mut self, mut data: &[u8], out: &mut impl FnMut(&[u8])) {
        while !data.is_empty() {
            if self.piece.is_empty() {
                self.piece.extend_from_slice(&self.tag);
            }
            let room = (self.tag.len() + MAX_PIECE).saturating_sub(self.piece.len());
            let look = &data[..data.len().min(room)];
            match look.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(mut i) => {
                    if look[i] == b'\r' && data.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    self.piece.extend_from_slice(&data[..=i]);
                    data = &data[i + 1..];
                    self.emit(out);
                }
                None => {
                    self.piece.extend_from_slice(look);
                    data = &data[look.len()..];
                    if self.piece.len() >= self.tag.len() + MAX_PIECE {
                        self.emit(out);
                    }
                }
            }
        }
    }

    /// The stream ended: a last line without its newline gets one.
    pub(crate) fn finish(&mut self, out: &mut impl FnMut(&[u8])) {
        if self.piece.len() > self.tag.len() {
            self.piece.push(b'\n');
            self.emit(out);
        }
        self.piece.clear();
    }

    fn emit(&mut self, out: &mut impl FnMut(&[u8])) {
        out(&self.piece);
        self.piece.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(tag: &str, chunks: &[&[u8]], end: bool) -> Vec<Vec<u8>> {
        let mut s = Splitter::new(tag.as_bytes());
        let mut got = Vec::new();
        for c in chunks {
            s.push(c, &mut |p| got.push(p.to_vec()));
        }
        if end {
            s.finish(&mut |p| got.push(p.to_vec()));
        }
        got
    }

    #[test]
    fn whole_lines_with_and_without_tag() {
        assert_eq!(
            pieces("", &[b"ab", b"c\nde", b"f\n"], true),
            vec![b"abc\n".to_vec(), b"def\n".to_vec()]
        );
        assert_eq!(
            pieces("[1] ", &[b"a\nb\n"], true),
            vec![b"[1] a\n".to_vec(), b"[1] b\n".to_vec()]
        );
    }

    #[test]
    fn a_last_line_gets_its_newline_only_at_the_end() {
        assert!(pieces("", &[b"no newline"], false).is_empty());
        assert_eq!(
            pieces("[0] ", &[b"no newline"], true),
            vec![b"[0] no newline\n".to_vec()]
        );
        assert!(pieces("[0] ", &[], true).is_empty());
    }

    #[test]
    fn carriage_returns_pass_at_once() {
        assert_eq!(
            pieces("", &[b"10%\r20%\r", b"30%"], false),
            vec![b"10%\r".to_vec(), b"20%\r".to_vec()]
        );
    }

    /// ssh ends its own messages with "\r\n": one piece, or the
    /// launcher's line written between the two would run into ssh's.
    #[test]
    fn a_carriage_return_and_its_newline_are_one_piece() {
        assert_eq!(
            pieces(
                "",
                &[b"Connection timed out during banner exchange\r\nConnection to h timed out\r\n"],
                false
            ),
            vec![
                b"Connection timed out during banner exchange\r\n".to_vec(),
                b"Connection to h timed out\r\n".to_vec()
            ]
        );
    }

    #[test]
    fn long_lines_are_cut_and_nothing_is_lost() {
        let big = vec![b'x'; 3 * MAX_PIECE + 5];
        let got = pieces("", &[&big[..1000], &big[1000..], b"\n"], true);
        assert_eq!(got.len(), 4);
        assert!(got[..3].iter().all(|p| p.len() == MAX_PIECE));
        assert_eq!(got[3], b"xxxxx\n");
        let joined: Vec<u8> = got.concat();
        assert_eq!(&joined[..big.len()], &big[..]);
    }
}
