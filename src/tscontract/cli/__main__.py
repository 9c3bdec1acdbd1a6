from tscontract.cli import main

main()
