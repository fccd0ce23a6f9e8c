package tidemq

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"sort"
)

// MD5OfBody is the lower-case hex MD5 of the body's bytes, as SDKs check it.
func MD5OfBody(body string) string {
	sum := md5.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// MD5OfAttributes is the digest SQS returns as MD5OfMessageAttributes (and,
// over the system attributes, MD5OfMessageSystemAttributes). It returns ""
// for an empty map, in which case the field is left out.
//
// The buffer hashed is, for each attribute in ordinal order of its name:
// length-prefixed name, length-prefixed DataType, a transport byte (1 for a
// string value, 2 for a binary one) and the length-prefixed value. Lengths
// are 4-byte big-endian.
func MD5OfAttributes(attrs map[string]MessageAttributeValue) string {
	if len(attrs) == 0 {
		return ""
	}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	h := md5.New()
	var lenBuf [4]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint32(lenBuf[:], uint32(len(b)))
		h.Write(lenBuf[:])
		h.Write(b)
	}
	for _, name := range names {
		v := attrs[name]
		field([]byte(name))
		field([]byte(v.DataType))
		if v.IsBinary() {
			h.Write([]byte{2})
			field(v.BinaryValue)
		} else {
			h.Write([]byte{1})
			field([]byte(v.StringValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
