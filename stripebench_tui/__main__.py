from stripebench_tui.cli import main

main()
