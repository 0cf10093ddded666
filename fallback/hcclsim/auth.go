package hcclsim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
)

// Admission to a world. The root info carries a 256-bit secret next to the
// world id (rootinfo.go); the world id also appears in segment names, which
// every user of the host can list, so it proves nothing. Every connection
// to a rendezvous starts with the hub's random challenge; the joiner
// answers with its own nonce and a proof, an HMAC under the secret of both
// nonces and of the rank it claims, and the hub compares it in constant
// time before the rank is claimed. The hub answers the admission with a
// proof of its own over the same nonces, so a rank also knows it talks to
// the world's rendezvous and not to a process that took its port. Nothing
// replayed from another connection verifies: the nonces are fresh.

const (
	secretBytes = 32
	nonceBytes  = 16
)

type worldSecret [secretBytes]byte

func newSecret() (s worldSecret) {
	_, _ = rand.Read(s[:])
	return s
}

func newNonce() []byte {
	b := make([]byte, nonceBytes)
	_, _ = rand.Read(b)
	return b
}

// proof is the HMAC-SHA256 under the secret of a purpose label, the
// hub's and the joiner's nonces, and the integers that the message
// carrying it asserts.
func (s *worldSecret) proof(label string, hubNonce, joinNonce []byte, vals ...uint64) []byte {
	mac := hmac.New(sha256.New, s[:])
	mac.Write([]byte(label))
	mac.Write([]byte{byte(len(hubNonce)), byte(len(joinNonce))})
	mac.Write(hubNonce)
	mac.Write(joinNonce)
	var b [8]byte
	for _, v := range vals {
		binary.LittleEndian.PutUint64(b[:], v)
		mac.Write(b[:])
	}
	return mac.Sum(nil)
}

// helloProof is what a joiner claiming rank of n presents.
func (s *worldSecret) helloProof(hubNonce, joinNonce []byte, n, rank int) []byte {
	return s.proof("hcclsim hello", hubNonce, joinNonce, uint64(n), uint64(rank))
}

// formedProof is what the hub presents with its admission; seg is the
// segment name it assigns (empty for an in-process world).
func (s *worldSecret) formedProof(hubNonce, joinNonce []byte, mode uint8, stage int, seg string) []byte {
	mac := hmac.New(sha256.New, s[:])
	mac.Write(s.proof("hcclsim formed", hubNonce, joinNonce, uint64(mode), uint64(stage)))
	mac.Write([]byte(seg))
	return mac.Sum(nil)
}

// segTag authenticates what a rank writes into its segment at formation:
// its rank, the segment's name and where its device memory can be mapped
// from. A peer checks it before it maps anything the segment names.
func (s *worldSecret) segTag(rank int, name string, d devMem) []byte {
	mac := hmac.New(sha256.New, s[:])
	mac.Write(s.proof("hcclsim segment", nil, nil, uint64(rank), uint64(d.pid), uint64(d.fd), uint64(d.base), uint64(d.size)))
	mac.Write([]byte(name))
	return mac.Sum(nil)
}

// verify compares a presented proof with the expected one in constant
// time.
func verify(got, want []byte) bool { return hmac.Equal(got, want) }
