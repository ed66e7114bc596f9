from edgebench.cli.app import main

main()
