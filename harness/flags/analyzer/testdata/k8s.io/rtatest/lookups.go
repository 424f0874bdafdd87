package rtatest

import "flag"

const ttlFlag = "ttl"

// Flags runs (Root calls it): its lookup of --ttl by name is a read of the flag.
func Flags(fs *flag.FlagSet) bool { return fs.Lookup(ttlFlag) != nil }

// OtherCommand is another command's code in an imported package: nothing Root runs calls it, so
// its lookup of a flag of the same name is no read of this one.
func OtherCommand(fs *flag.FlagSet) bool { return fs.Lookup("ttl") != nil }
