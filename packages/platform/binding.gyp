{
  "targets": [
    {
      "target_name": "paddock_page_return",
      "sources": ["native/page_return.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
