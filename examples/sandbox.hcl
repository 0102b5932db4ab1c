# A sandbox with files, a read-only mount, an output directory and limits,
# and no bridge. The directories are made next to this file.
#
#   bin/parselbox exec --config examples/sandbox.hcl \
#     'import os; open("hello.txt", "w").write(open("/mnt/ref/README.md").read()[:40]); os.listdir(".")'

output_dir = "out"

mount "ref" {
  source = "."   # this folder, read-only: /mnt/ref
}

memory  = 512
timeout = 30
