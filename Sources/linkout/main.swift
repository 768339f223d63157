import LinkOut

#if canImport(Glibc)
import Glibc
#endif

exit(CommandLineInterface.run(Array(CommandLine.arguments.dropFirst())))
