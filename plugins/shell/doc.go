// Command parselbox-bridge-shell gives the sandbox shell commands and live
// shell sessions that run on the host. Build it as bin/parselbox-bridge-shell
// and declare it in the host's configuration:
//
//	bridge "sh" {
//	  plugin = "shell"
//	  config = {
//	    command    = "bash"          # or "ssh -T user@host", "docker exec -i box sh"
//	    cwd        = "/srv/project"
//	    env        = { LANG = "C.UTF-8" }
//	    timeout    = 60              # seconds, or "2m"; 0: no limit
//	    max_output = 16777216        # bytes kept of stdout, and of stderr
//	  }
//	}
//
// # Configuration
//
// Every key is optional; any other key is a configuration error.
//
//   - command: the shell, as a command line (default "bash"). It is split
//     into words as a POSIX shell would (quotes and backslashes, no
//     expansions) and run without a shell around it. Commands are always fed
//     to its stdin, so anything that reads commands from stdin works:
//     "bash", "sh", "python3", "ssh -T user@host",
//     "kubectl exec -i pod -- sh". The program is looked up in the shell's
//     PATH when the bridge is configured; a missing one is a configuration
//     error.
//   - cwd: the shell's working directory (default: the bridge process's). It
//     must exist.
//   - env: variables of the shell's environment, added to the bridge
//     process's own environment, which holds only the host variables that
//     the bridge block's `env` list names. PATH defaults to sdk.DefaultPath,
//     /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; HOME and
//     everything else are unset unless given one way or the other: for
//     `ssh -T user@host`, name HOME and SSH_AUTH_SOCK in the bridge block's
//     `env` list (go-plugin's own PLUGIN_* variables are never passed on).
//   - timeout: how long one exec may run (default 60 s): a number of seconds
//     or a duration string ("90s"); 0 means no limit. It does not apply to
//     sessions, which run until they exit or are cancelled.
//   - max_output: how many bytes exec keeps of stdout, and separately of
//     stderr (default 16 MiB). Past it the first and last halves are kept,
//     cut at line ends, with a line between them saying how many bytes were
//     left out.
//
// # Tools
//
// sh.exec(command, timeout=None) runs command (shell code, any number of
// lines) in a fresh shell and returns {"exit": int, "stdout": str,
// "stderr": str}. Every call is a new process: nothing carries over from one
// exec to the next. A non-zero exit status is a result, not an exception; a
// shell killed by signal N exits with 128+N. Output is decoded as UTF-8
// (invalid bytes become U+FFFD): move binary data as base64. timeout
// (seconds) overrides the configured one for this call. Run as a task,
// sh.exec.task(...) also logs each output line, of stdout and of stderr, so
// that task.tail() shows progress (a plain call logs nothing: there is no
// log to read, and logging costs more than the command for chatty output).
//
// When the shell exits, background jobs it left running are killed: each
// exec runs in its own process group, and the group ends with the shell.
// Past the timeout the group gets SIGTERM, then SIGKILL 2 s later, and the
// call raises TimeoutError("command timed out after 1m0s; it was killed
// with its process group") whose message goes on with the last 4 KiB of
// stdout and of stderr: the output up to the timeout, which is otherwise
// lost (in a task, the log has all of it).
//
// sh.shell(first_command=None) starts a live session, meant to run as a
// task:
//
//	t = sh.shell.task()             # bash, or whatever `command` is
//	t.send("x=21")                  # a line on the shell's stdin
//	t.send("echo $((x*2))")
//	t.tail(1)                       # "42", once the shell has answered
//	t.send("exit 3")                # await t -> {"exit": 3}
//	t.cancel()                      # or: kill the shell and its children
//
// The first log line is "shell started: COMMAND (pid N)"; then every output
// line, stdout and stderr alike, goes to the task's log as it is read. The
// two streams are separate pipes, so lines written to both at nearly the
// same time may be logged in either order, and a prompt without a newline
// (Python's ">>> " on stderr) shows up only with the next line of its
// stream. A message is written to stdin as a line: a string as its text,
// None as end of input (closing stdin), anything else as its JSON.
// first_command, if given, is the first line sent.
//
// A program started in the session reads the same stdin and may read
// ahead, taking lines meant for the shell after it. To talk to Python, make
// it the session: sh.shell.task("exec python3 -qi"), then t.send("exit()")
// ends the task. Otherwise wait until such a program has exited before
// sending the shell more.
//
// The task ends with {"exit": status} when the shell exits, and as
// cancelled when task.cancel() kills the shell's process group. No timeout
// applies to a session. Called synchronously, sh.shell(first_command) has
// nobody to send further lines: the shell gets first_command, then end of
// input, and the call returns {"exit": status} when the shell exits; its
// output is not kept (use exec for that).
//
// # Errors, as Python sees them
//
//   - TimeoutError: exec ran past its timeout (see above).
//   - ConnectionError: the shell could not be started, or the bridge is
//     shutting down (a Shutdown kills every running exec and session).
//   - ValueError: bad arguments, such as a negative timeout.
//   - asyncio.CancelledError: the call or task was cancelled; the process
//     group was killed.
//
// If the bridge's process dies, its shells get SIGKILL (best effort: the
// shell itself, not its children).
package main
