// Package procgroup runs a child process in a process group of its own and
// stops the whole group, gracefully first: EOF on stdin, then SIGTERM, then
// SIGKILL, each after a grace period the caller chooses.
//
// Every child process Parselbox starts goes through it: the sandbox's Deno
// process, bridge plugins, and the processes a bridge starts itself (the
// shell bridge's shells, the MCP proxy's stdio servers). A bridge author who
// starts processes can use it too.
//
// On Linux the kernel also kills the child when the process that started it
// dies (Pdeathsig), and Wait kills what is left of the group once the leader
// has exited but before it is reaped, while the group's id cannot have been
// reused by another process.
//
//	cmd := exec.Command("bash")
//	stdin, _ := cmd.StdinPipe()
//	p, err := procgroup.Start(cmd)
//	if err != nil { ... }
//	go p.Wait()
//	...
//	p.Stop(stdin, 2*time.Second) // EOF, then SIGTERM, then SIGKILL
package procgroup
