package bridgev1

// ProtocolVersion is the go-plugin handshake protocol version that goes with
// this package (sdk.Handshake uses it). A host and a plugin of different
// versions refuse each other at start.
const ProtocolVersion = 1
